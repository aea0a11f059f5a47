// The im2col of the OpenBLAS convolution baseline: the copy that turns one image into the matrix
// whose product with the filters (K x C*R*S) is the convolution (openblas_baseline.h).
#pragma once

#include "common/workload.h"

namespace tune::bench {

/// Whether the image of `s` (C x H*W, NCHW) is already its im2col matrix: a 1x1 filter at stride
/// 1 without padding meets each pixel once, in order, so the matrix needs no copy.
bool Im2colIsIdentity(const Conv2dShape& s);

/// Writes the im2col matrix of one image `in` (C x H x W, NCHW) into `columns` (C*R*S rows of
/// P*Q): row (c, r, t) holds, for each output position (p, q), the input pixel that filter tap
/// (r, t) of channel c meets there, and 0 where the tap falls in the padding. Handles stride,
/// padding and dilation; `columns` must hold C*R*S*P*Q floats.
void Im2col(const Conv2dShape& s, const float* in, float* columns);

}  // namespace tune::bench
