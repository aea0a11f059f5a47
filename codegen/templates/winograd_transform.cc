#include "codegen/templates/winograd_transform.h"

#include "common/status.h"

namespace tune {

const WinogradMatrices& WinogradFor(int64_t m) {
  static const WinogradMatrices f23 = {
      .m = 2,
      .alpha = 4,
      .bt = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
      .g = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}},
      .at = {{1, 1, 1, 0}, {0, 1, -1, -1}},
  };
  static const WinogradMatrices f43 = {
      .m = 4,
      .alpha = 6,
      .bt = {{4, 0, -5, 0, 1, 0},
             {0, -4, -4, 1, 1, 0},
             {0, 4, -4, -1, 1, 0},
             {0, -2, -1, 2, 1, 0},
             {0, 2, -1, -2, 1, 0},
             {0, 4, 0, -5, 0, 1}},
      .g = {{1.0f / 4, 0, 0},
            {-1.0f / 6, -1.0f / 6, -1.0f / 6},
            {-1.0f / 6, 1.0f / 6, -1.0f / 6},
            {1.0f / 24, 1.0f / 12, 1.0f / 6},
            {1.0f / 24, -1.0f / 12, 1.0f / 6},
            {0, 0, 1}},
      .at = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}},
  };
  TUNE_CHECK(m == 2 || m == 4) << "Winograd F(" << m << ",3) is not implemented";
  return m == 2 ? f23 : f43;
}

std::vector<ir::Expr> ApplyMatrix(const std::vector<std::vector<float>>& matrix,
                                  const std::vector<ir::Expr>& in) {
  std::vector<ir::Expr> out;
  for (const std::vector<float>& row : matrix) {
    TUNE_CHECK(row.size() == in.size());
    ir::Expr sum;
    for (size_t j = 0; j < row.size(); ++j) {
      const float c = row[j];
      if (c == 0) {
        continue;
      }
      if (!sum.defined()) {
        sum = c == 1 ? in[j] : in[j] * ir::Expr(c);
      } else if (c == 1) {
        sum = sum + in[j];
      } else if (c == -1) {
        sum = sum - in[j];
      } else {
        sum = ir::Fma::Make(in[j], ir::BroadcastTo(ir::Expr(c), in[j].type().lanes()), sum);
      }
    }
    TUNE_CHECK(sum.defined()) << "a transform row of zeros";
    out.push_back(sum);
  }
  return out;
}

ir::Stmt TransformTile(const std::vector<std::vector<float>>& matrix,
                       const std::vector<std::vector<ir::Expr>>& tile, int lanes,
                       const std::function<ir::Stmt(int64_t i, int64_t j, ir::Expr value)>& store) {
  const int64_t rows = static_cast<int64_t>(matrix.size());
  const int64_t cols = static_cast<int64_t>(tile.front().size());
  // Columns first: half[i][j] = sum_k matrix[i][k] * tile[k][j], kept in a stack buffer.
  ir::Buffer half("wino_half", ir::MemoryScope::kStack);
  auto at = [&](int64_t i, int64_t j) { return ir::Expr((i * cols + j) * lanes); };
  std::vector<ir::Stmt> steps;
  for (int64_t j = 0; j < cols; ++j) {
    std::vector<ir::Expr> column;
    for (const std::vector<ir::Expr>& row : tile) {
      column.push_back(row[j]);
    }
    std::vector<ir::Expr> mixed = ApplyMatrix(matrix, column);
    for (int64_t i = 0; i < rows; ++i) {
      steps.push_back(ir::Store::Make(half, at(i, j), mixed[i]));
    }
  }
  // Then the rows: out[i][j] = sum_k half[i][k] * matrix[j][k].
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<ir::Expr> row;
    for (int64_t k = 0; k < cols; ++k) {
      row.push_back(ir::Load::Make(half, at(i, k), lanes));
    }
    std::vector<ir::Expr> mixed = ApplyMatrix(matrix, row);
    for (int64_t j = 0; j < rows; ++j) {
      steps.push_back(store(i, j, mixed[j]));
    }
  }
  return ir::Allocate::Make(half, rows * cols * lanes, ir::Block::Make(std::move(steps)));
}

}  // namespace tune
