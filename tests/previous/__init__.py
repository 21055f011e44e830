"""The engines and apply-path helpers as they were before the hot-path work (base cae2a73):
verbatim copies, only their imports pointed here. They are the reference that the
optimized code must match byte for byte (tests/unit/test_previous_behaviour.py); nothing
else imports them. They are frozen whole: no module here imports `service` (only the wire
contract's Structs in `schemas`), so a change to any engine module or table shows up as a
difference from them.

- `arithmetic`: service/engine/arithmetic.py
- `cfc_formulas`, `cfc_standing`, `cfc_order`, `cfc_engine`: service/engine/cfc/
- `fide_change`, `fide_performance`, `fide_engine`: service/engine/fide/
- `contract`, `tables`, `fide_initial`, `fide_lists`, `fide_periods`, `fide_records`:
  service/engine/contract.py, service/engine/tables.py and service/engine/fide/initial.py,
  lists.py, periods.py, records.py, copied verbatim when this package was frozen whole
  (issue 34; until then the service's own modules were imported); `fide_lists` takes
  `ratio_text` from `arithmetic`, which service/engine/fide/exact.py only re-exports
- `ledger`: order_key and pack_state (service/timeline.py), entries_of and pack_entry
  (service/readmodel.py), event_output (service/rating.py); list_field and _Packed
  (service/readmodel.py), copied in when the package was frozen whole
"""
