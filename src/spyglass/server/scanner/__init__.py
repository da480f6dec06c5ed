"""The crawler's protocol side: what talks to a service and extracts its banner members.

:mod:`.protocols` lists what the crawler speaks and on which ports it tries what first;
:func:`.probe.probe` connects to one address and port and returns a :class:`.probe.Found`.
Each protocol is one small module under :mod:`.modules`.
"""
