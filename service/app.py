"""`faststream run service.app:build_app --factory`: the documented entry point for FastStream's
own runner, a thin face over service/runtime/app.py, where the app is built from the settings
(the environment's; importing this module connects nothing)."""

from __future__ import annotations

from service.runtime.app import build_app, serve

__all__ = ["build_app", "serve"]
