#ifndef STRATA_ZLIB_SHIM_H
#define STRATA_ZLIB_SHIM_H
#include <zlib.h>

/// deflateInit/inflateInit are macros; Swift cannot call them directly.
static inline int strata_deflateInit(z_streamp stream, int level) {
    return deflateInit(stream, level);
}

static inline int strata_inflateInit(z_streamp stream) {
    return inflateInit(stream);
}
#endif
