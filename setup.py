"""Packaging that pyproject.toml cannot express: the top-level ``themes/`` directory ships as the
package ``spyglass.themes`` beside everything under ``src/`` but ``spyglass.testing`` (a ``find``
directive cannot be extended by one package). Everything else is in pyproject.toml.

``spyglass.testing`` (the tests' and benchmarks' servers on loopback) stays out of the wheel: spyglass
never imports it, and an editable install (``pip install -e '.[test]'``) still finds it in src/."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("src", exclude=["spyglass.testing", "spyglass.testing.*"]), "spyglass.themes"],
    package_dir={"": "src", "spyglass.themes": "themes"},
)
