add_unit_test(proc_ns)
