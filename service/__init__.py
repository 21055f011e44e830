"""The rating service: pure engines (`service.engine`) and the adapters around them."""

__version__ = "0.2.0"
