// Command-line flags for the input data. Read them in main and pass the values
// down.
#ifndef PSTRAIN_DATA_DATA_FLAGS_H_
#define PSTRAIN_DATA_DATA_FLAGS_H_

#include <gflags/gflags.h>

DECLARE_string(data_dir);
DECLARE_string(data_format);

#endif  // PSTRAIN_DATA_DATA_FLAGS_H_
