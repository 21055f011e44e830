"""The engines and apply-path helpers as they were before the hot-path work (base cae2a73):
verbatim copies, only their imports pointed here. They are the reference that the
optimized code must match byte for byte (tests/unit/test_previous_behaviour.py); nothing
else imports them.

- `arithmetic`: service/engine/arithmetic.py
- `cfc_formulas`, `cfc_standing`, `cfc_order`, `cfc_engine`: service/engine/cfc/
- `fide_change`, `fide_performance`, `fide_engine`: service/engine/fide/ (the modules the
  work did not touch are imported from the service)
- `ledger`: order_key and pack_state (service/timeline.py), entries_of and pack_entry
  (service/readmodel.py), event_output (service/rating.py)
"""
