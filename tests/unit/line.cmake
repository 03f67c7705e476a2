# Lines built without printf (dac/base/line.c).
add_unit_test(line)
