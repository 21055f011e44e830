"""`faststream run service.app:app`: the documented entry point, a thin face over
service/runtime/app.py, where the app is built from settings."""

from __future__ import annotations

from service.runtime.app import build_app, serve

__all__ = ["build_app", "serve"]


def __getattr__(name: str):
    # Built from the environment on first access, so importing this module connects nothing.
    if name == "app":
        return build_app()
    raise AttributeError(name)
