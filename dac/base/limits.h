/* limits.h - every cap on a walk over target data, in one place. Hitting one is ADAC_E_LIMIT. */
#ifndef ADAC_LIMITS_H
#define ADAC_LIMITS_H

#define ADAC_BUILD_ID_MAX 64u                  /* bytes of one GNU build-id kept per module */
#define ADAC_MAX_DESCRIPTOR_BYTES (16u << 20)  /* JSON text of one contract descriptor */
#define ADAC_MAX_POINTER_DATA 65536u           /* pointer_data slots of one descriptor */
#define ADAC_MAX_SUBDESCRIPTOR_DEPTH 4u        /* nesting of subDescriptors */
#define ADAC_MAX_TYPE_SIZE 4096u               /* bytes of one runtime struct read whole */
#define ADAC_MAX_MODULES 65536u                /* modules of one target */
#define ADAC_MAX_LOADED_TYPES (1u << 20)       /* TypeDefToMethodTableMap entries the GC statics index reads */
#define ADAC_MAX_THREADS 65536u                /* threads of one target */
#define ADAC_MAX_SYNC_BLOCKS (16u << 20)       /* sync table entries read (the table grows to one per object locked or hashed) */
#define ADAC_MAX_CHAIN_DEPTH 100000u           /* frames of one continuation chain (default cap) */
#define ADAC_MAX_CHAINS 10000000u              /* chains found by a heap scan */
#define ADAC_MAX_STRING_CHARS 4096u            /* characters read from one target string */
#define ADAC_MAX_PATH_BYTES 4096u              /* one file path read from the target */
#define ADAC_MAX_NIBBLE_ENTRIES 1000000u       /* entries in one debug-info chunk */
#define ADAC_MAX_METADATA_ROWS 16777215u       /* rows of one ECMA-335 table */
#define ADAC_MAX_ELF_SYMBOLS 10000000u         /* dynamic symbols walked in one module */
#define ADAC_MAX_CORE_SEGMENTS 1000000u        /* PT_LOAD headers of one core file */
#define ADAC_MAX_CORE_NOTE_BYTES (64u << 20)   /* PT_NOTE bytes of one core file */
#define ADAC_MAX_MAPPINGS 1000000u             /* file mappings of one target (NT_FILE, /proc/pid/maps) */
#define ADAC_MAX_SNAPSHOT_BYTES (64ull << 30)   /* readable memory a live process's copy may hold (--release) */
#define ADAC_MAX_UNWIND_FRAMES 100000u         /* physical frames unwound for one thread */
#define ADAC_MAX_GROUP_NESTING 256u            /* groups `pstacks` prints inside one another */
#define ADAC_MAX_RANGE_FRAGMENTS 4096u         /* RangeSectionFragments in one range-section-map leaf list */
#define ADAC_MAX_NIBBLE_UNITS (4u << 20)        /* 32-bit nibble-map units scanned back (1 GiB of JIT code) */
#define ADAC_MAX_CODE_HEAPS 4096u               /* EE JIT code heaps (CodeHeapListNodes) walked */
#define ADAC_MAX_RUNTIME_FUNCTIONS (16u << 20)  /* RUNTIME_FUNCTIONs (or hot/cold map entries) of one R2R image */
#define ADAC_MAX_R2R_FUNCLETS 65536u            /* RUNTIME_FUNCTIONs stepped back from a funclet to its method */
#define ADAC_MAX_HASHMAP_BUCKETS (64u << 20)    /* buckets of one runtime HashMap (R2R entry point map) */
#define ADAC_MAX_HASHMAP_SLOTS 64u              /* HashMapSlotsPerBucket */
#define ADAC_MAX_PRECODE_BYTES 64u              /* bytes of one precode template (PrecodeMachineDescriptor) */

#define ADAC_MAX_METADATA_BYTES (256u << 20)   /* one module's metadata blob */
#define ADAC_MAX_PE_SECTIONS 1024u             /* section headers of one PE image */
#define ADAC_MAX_METADATA_STREAMS 64u          /* stream headers of one metadata root */
#define ADAC_MAX_TYPE_NESTING 64u              /* enclosing types of one nested type */
#define ADAC_MAX_SIG_DEPTH 64u                /* nesting of types inside one signature */
#define ADAC_MAX_NAME_BYTES (64u << 10)       /* one formatted type or method name */
#define ADAC_MAX_GENERIC_ARGS 1024u           /* type arguments of one instantiation */
#define ADAC_MAX_TYPE_DEPTH 64u               /* TypeHandles nested inside one type (names) */
#define ADAC_MAX_NAME_CACHE (1u << 20)        /* distinct names cached per runtime (they live until it closes) */
#define ADAC_MAX_DEBUGINFO_BYTES (4u << 20)    /* one debug-info blob (header plus all chunks) */
#define ADAC_MAX_PDB_BYTES (256u << 20)        /* one portable PDB file */
#define ADAC_MAX_PE_HEADER_BYTES 4096u         /* PE headers (MS-DOS stub to the section table) read of one image */

#define ADAC_MAX_SYMBOL_PATH_ENTRIES 64u       /* directories and symbol servers of one symbol path */
#define ADAC_MAX_SYMBOL_FILE_BYTES (4ull << 30) /* one file downloaded from a symbol server (libcoreclr.so.dbg is large) */
#define ADAC_MAX_HTTP_REDIRECTS 8u             /* redirects followed for one symbol server request */

#define ADAC_MAX_GC_HEAPS 4096u          /* server GC heaps (NumHeaps) */
#define ADAC_MAX_GC_GENERATIONS 16u      /* entries of one generation table (TotalGenerationCount) */
#define ADAC_MAX_GC_REGIONS (1u << 20)   /* regions/segments of all heaps, free lists included */
#define ADAC_MAX_GC_METHOD_TABLES (1u << 22) /* distinct MethodTables seen by one heap walk */
#define ADAC_MAX_GC_RERUNS 8u           /* times one command lets a held process run (1, 2, 4... ms) to walk its heap */

#define ADAC_MAX_UNWIND_CHAIN 32u              /* chained UNWIND_INFOs followed for one frame */
#define ADAC_MAX_METHOD_UNWIND_INFOS 65536u    /* RUNTIME_FUNCTIONs (funclets) of one JIT-compiled method */
#define ADAC_MAX_CFI_ROWS 256u                 /* call-frame rows of one prologue (one per unwind code at most) */

#define ADAC_MAX_ELF_PHDRS 256u                /* program headers of one loaded ELF image */
#define ADAC_MAX_ELF_DYN_ENTRIES 4096u         /* .dynamic entries of one loaded ELF image */
#define ADAC_MAX_ELF_NOTE_BYTES 65536u         /* one PT_NOTE segment of a loaded ELF image */
#define ADAC_MAX_DESCRIPTOR_BLOBS 16u          /* contract descriptors (main + sub-descriptors) of one runtime */
#define ADAC_MAX_LOOKUP_SEGMENTS 4096u         /* segments of one ModuleLookupMap */
#define ADAC_MAX_QUEUE_SEGMENTS 65536u         /* segments of one ConcurrentQueue (the thread pool's work queues) */
#define ADAC_MAX_QUEUE_ITEMS (1u << 24)        /* work items listed from one of the thread pool's queues */
#define ADAC_MAX_TYPE_HASH_BUCKETS (1u << 24)  /* buckets of one EETypeHashTable */
#define ADAC_MAX_TYPE_HASH_ENTRIES (1u << 22)  /* entries visited in one EETypeHashTable */
#define ADAC_MAX_TYPE_FIELDS 65535u            /* FieldDescs of one type (the EEClass counts are 16-bit) */
#define ADAC_MAX_PARENT_DEPTH 64u              /* parent types walked up from one MethodTable */
#define ADAC_MAX_GC_SERIES 4096u               /* series of one GCDesc `refs` reads */
#define ADAC_MAX_GRAPH_OBJECTS (1u << 25)      /* heap objects holding references `gcroot` keeps (about 20 bytes each) */
#define ADAC_MAX_GRAPH_EDGES (1u << 27)        /* references between heap objects `gcroot` keeps (about 8 bytes each) */
#define ADAC_MAX_GC_HANDLES (1u << 24)         /* GC handles read from the handle tables */
#define ADAC_MAX_HANDLE_SEGMENTS 65536u        /* segments of one handle table */
#define ADAC_MAX_HANDLE_MAPS 1024u             /* HandleTableMap links */
#define ADAC_MAX_STACK_SCAN_BYTES (64u << 20)  /* bytes of one thread's stack `gcroot` scans conservatively */
#define ADAC_MAX_GC_ROOTS (1u << 24)           /* roots of one target `gcroot` considers */
#define ADAC_MAX_ROOT_PATH 65536u              /* hops of one root's path to the object */
#define ADAC_MAX_INNER_EXCEPTIONS 32u          /* inner exceptions `pe` follows from one exception */
#define ADAC_MAX_STACK_TRACE_FRAMES 4096u      /* frames `pe` decodes from one exception's _stackTrace */
#define ADAC_MAX_EPILOG_POPS 16u               /* pops in one epilog (there are 16 registers) */
#define ADAC_MAX_FLAG_NAMES 16u                /* single-bit ContinuationFlags members named */
#define ADAC_MAX_REF_OFFSETS 4096u             /* object references collected from one value type */
#define ADAC_MAX_REF_VISITS 65536u             /* fields visited while collecting them (nested structs included) */
#define ADAC_MAX_VALUE_BYTES 65536u            /* bytes of one value or of the elements shown of one array */
#define ADAC_MAX_ADDRESS_ARGS 64u              /* addresses given to one command (--address) */
#define ADAC_MAX_LIST_ITEMS 65536u             /* items of one List<object> of continuations followed */
#define ADAC_MAX_DISPATCHERS 64u               /* nested dispatch loops (AsyncDispatcherInfo records) on one thread */
#define ADAC_MAX_BLOCKING_INFOS 64u            /* nested blocking waits (ThreadBlockingInfo records) on one thread */
#define ADAC_MAX_WAIT_CYCLE 64u               /* threads of one deadlock reported (locks, synchronous waits) */
#define ADAC_MAX_STACK_SCAN_BYTES (64u << 20) /* bytes of one thread's stack searched for a synchronous waiter */
#define ADAC_MAX_QUEUE_WAITERS ADAC_MAX_CHAINS     /* async waiters (TaskNodes) followed in one SemaphoreSlim's queue */
#define ADAC_MAX_AWAITERS (1u << 28)           /* resolved awaiters of all tasks */
#define ADAC_MAX_STACK_NODES (1u << 25)        /* nodes of all stacks together: paths multiply where tasks are
                                                * awaited by several callers (fan-in after fan-out) */
#define ADAC_MAX_KEPT_OBJECTS (ADAC_MAX_CHAINS * 4ull) /* continuations, and pending tasks, kept from one heap */

#define ADAC_MAX_SYM_METHODS (1u << 20)        /* methods in one symbol file */
#define ADAC_MAX_SYM_TYPES (1u << 20)          /* types in one symbol file */
#define ADAC_MAX_SYM_FILES (1u << 20)          /* source files in one symbol file */
#define ADAC_MAX_SYM_UNITS 65536u              /* compile units (assemblies) in one symbol file */
#define ADAC_MAX_SYM_SECTIONS 60000u           /* code sections of one symbol file (ELF's limit is 65280) */
#define ADAC_MAX_SYM_FUNCTIONS 256u            /* RUNTIME_FUNCTIONs (body and funclets) of one method in a symbol file */
#define ADAC_MAX_SYM_TYPE_DEPTH 16u             /* objects laid out below a variable in a symbol file */
#define ADAC_MAX_SYMFILE_BYTES (1u << 30)      /* one symbol file, and each of its sections */

#endif
