# Arrays of records sized for whole huge pages, and grown by doubling (dac/base/grow.h).
add_unit_test(grow)
