# Blocks handed out in order and reset whole (dac/base/arena.c).
add_unit_test(arena)
