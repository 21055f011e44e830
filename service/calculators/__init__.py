"""`rating-service calc`: the four tools of the FIDE calculator methodology (expected
score, rating change, performance rating, norm check) and their CFC / NASPA twins,
computed by the engines' own public pieces (service/engine), never a second copy of a
rule. One module per tool; service/cli/calc.py registers them on the command line."""
