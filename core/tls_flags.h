// The mutual TLS flags (--tls_cert, --tls_key, --tls_ca: core/tls.h), read
// once at a task's start.
#ifndef PSTRAIN_CORE_TLS_FLAGS_H_
#define PSTRAIN_CORE_TLS_FLAGS_H_

#include "core/status.h"

namespace pstrain {

// Loads the files the flags name into TaskTls(), or leaves it null when
// none is set. InvalidArgument when only some are set or the files do not
// hold.
Status InitTaskTlsFromFlags();

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TLS_FLAGS_H_
