"""The files people bring and take away: FIDE TRF, rating lists (JSON Lines, CSV), JSON
Lines documents. Pure readers and writers over the schemas: no Redis, no service."""
