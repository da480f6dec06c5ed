"""The real-time stream: the hub that fans collected banners out, the stream host, the demo
collector, the follower of a shared store and the replay method."""

from spyglass.server.stream import replay
from spyglass.server.stream.demo import DemoCollector
from spyglass.server.stream.follow import StoreFollower
from spyglass.server.stream.host import create_stream_app
from spyglass.server.stream.hub import StreamHub

__all__ = ["DemoCollector", "StoreFollower", "StreamHub", "create_stream_app", "replay"]
