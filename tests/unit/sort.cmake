# qsort skipped for elements already in order (dac/base/sort.c).
add_unit_test(sort)
