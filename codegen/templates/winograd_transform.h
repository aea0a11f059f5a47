// Winograd's minimal filtering F(m, 3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016): an m x m tile of a 3x3 convolution from an alpha x alpha input tile,
// alpha = m + 2, with alpha^2 multiplications instead of 9 m^2:
//
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A
//
// g the 3x3 filter, d the input tile, .* the element-wise product. The matrices use the
// interpolation points 0, 1, -1 (F(2,3)) and 0, 1, -1, 2, -2 (F(4,3)), plus infinity.
//
// The transforms are emitted as straight-line vector code: each coefficient 1 or -1 an add or a
// subtract, each zero left out, others one FMA by a constant.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/ir/ir.h"

namespace tune {

/// The three matrices of F(m, 3), row-major, as the formula above uses them.
struct WinogradMatrices {
  int64_t m = 0, alpha = 0;
  std::vector<std::vector<float>> bt;  // alpha x alpha: input transform B^T
  std::vector<std::vector<float>> g;   // alpha x 3: filter transform G
  std::vector<std::vector<float>> at;  // m x alpha: output transform A^T
};

/// F(2,3) or F(4,3); aborts for any other m.
const WinogradMatrices& WinogradFor(int64_t m);

/// out[i] = sum_j matrix[i][j] * in[j] for every row i, as vector expressions of `in`'s lanes.
std::vector<ir::Expr> ApplyMatrix(const std::vector<std::vector<float>>& matrix,
                                  const std::vector<ir::Expr>& in);

/// The 2-D transform X * tile * X^T of a rows(tile) x cols(tile) tile of vectors (row-major),
/// X = `matrix` (rows x rows(tile)); the columns first. The intermediate results go through the
/// stack buffer `scratch` (size scratch_elements(...)), so that each is computed once; `store`
/// receives the result, element (i, j) of a rows(matrix) x rows(matrix) tile.
/// `lanes` is the vector width of every element.
ir::Stmt TransformTile(const std::vector<std::vector<float>>& matrix,
                       const std::vector<std::vector<ir::Expr>>& tile, int lanes,
                       const std::function<ir::Stmt(int64_t i, int64_t j, ir::Expr value)>& store);

}  // namespace tune
