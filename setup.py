"""Packaging that pyproject.toml cannot express: the top-level ``themes/`` directory ships as the
package ``spyglass.themes`` beside everything under ``src/`` (a ``find`` directive cannot be
extended by one package). Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("src"), "spyglass.themes"],
    package_dir={"": "src", "spyglass.themes": "themes"},
)
