# Arrays made in parts put end to end (dac/base/pieces.c): the heap pass's records, gcroot's graph.
add_unit_test(pieces)
