# Deadlocks through tasks (synchronous waits, running stacks, locks) over made-up waits.
add_unit_test(wait_cycle)
