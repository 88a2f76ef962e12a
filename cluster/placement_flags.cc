#include "cluster/placement_flags.h"

DEFINE_string(placement, "greedy",
              "How variables are placed on ps tasks: greedy (by bytes, balanced) or "
              "round_robin (TF's replica_device_setter default).");
DEFINE_int64(min_slice_bytes, 256 << 10,
             "A variable (with its optimizer slots) larger than this is partitioned along "
             "axis 0 over several ps tasks.");
