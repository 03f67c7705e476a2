# Managed-frame unwinding: the x64 unwind-code interpreter on hand-built UNWIND_INFO blobs.
add_unit_test(managed_unwind)
