# Lock deadlock cycles over made-up holders and waits.
add_unit_test(lock_wait)
