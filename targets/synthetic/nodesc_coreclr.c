/* nodesc_coreclr.c - a libcoreclr.so that exports no contract descriptor (a runtime built without
 * data contracts, or older than .NET 9). */
int coreclr_initialize(void);
int coreclr_initialize(void) { return 0; }
