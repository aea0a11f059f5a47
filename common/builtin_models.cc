// The built-in models of workload_list.h: the layers of ResNet-50, MobileNet-v2 and BERT-base
// at batch 1, fp32, each with how many times one inference runs it.
#include <array>
#include <utility>

#include "common/workload_list.h"

namespace tune {
namespace {

// ResNet-50 v1.5 (the stride of a downsampling block is on its 3x3 convolution), 224x224,
// NCHW. Batch norm folds into the weights; bias and ReLU are left to the next operator.
constexpr std::string_view kResnet50 =
    R"(# ResNet-50 v1.5 at batch 1, 224x224, NCHW: 24 distinct layers
# stem
conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3
# stage 1 (56x56): 3 bottlenecks, the first with a 1x1 projection of its input
conv2d:N=1,C=64,H=56,W=56,K=64,R=1,S=1
conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1      3
conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1           4
conv2d:N=1,C=256,H=56,W=56,K=64,R=1,S=1           2
# stage 2 (28x28): 4 bottlenecks
conv2d:N=1,C=256,H=56,W=56,K=128,R=1,S=1
conv2d:N=1,C=128,H=56,W=56,K=128,R=3,S=3,stride=2,pad=1
conv2d:N=1,C=256,H=56,W=56,K=512,R=1,S=1,stride=2
conv2d:N=1,C=128,H=28,W=28,K=512,R=1,S=1          4
conv2d:N=1,C=512,H=28,W=28,K=128,R=1,S=1          3
conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1    3
# stage 3 (14x14): 6 bottlenecks
conv2d:N=1,C=512,H=28,W=28,K=256,R=1,S=1
conv2d:N=1,C=256,H=28,W=28,K=256,R=3,S=3,stride=2,pad=1
conv2d:N=1,C=512,H=28,W=28,K=1024,R=1,S=1,stride=2
conv2d:N=1,C=256,H=14,W=14,K=1024,R=1,S=1         6
conv2d:N=1,C=1024,H=14,W=14,K=256,R=1,S=1         5
conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,pad=1    5
# stage 4 (7x7): 3 bottlenecks
conv2d:N=1,C=1024,H=14,W=14,K=512,R=1,S=1
conv2d:N=1,C=512,H=14,W=14,K=512,R=3,S=3,stride=2,pad=1
conv2d:N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2
conv2d:N=1,C=512,H=7,W=7,K=2048,R=1,S=1           3
conv2d:N=1,C=2048,H=7,W=7,K=512,R=1,S=1           2
conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1      2
# classifier
gemm:M=1,N=1000,K=2048
)";

// MobileNet-v2 (width 1.0), 224x224, NCHW. Its 17 depthwise 3x3 layers are grouped convolutions
// (groups = channels), which tune's conv2d workloads do not express (groups=1 only): the list
// holds the stem, every 1x1 expansion and projection, the last 1x1 and the classifier, which
// together are 93% of the model's multiply-adds.
constexpr std::string_view kMobilenetV2 =
    R"(# MobileNet-v2 at batch 1, 224x224, NCHW: the stem, pointwise layers and classifier
# (the depthwise layers are grouped convolutions, which conv2d workloads do not express)
conv2d:N=1,C=3,H=224,W=224,K=32,R=3,S=3,stride=2,pad=1
conv2d:N=1,C=32,H=112,W=112,K=16,R=1,S=1
conv2d:N=1,C=16,H=112,W=112,K=96,R=1,S=1
conv2d:N=1,C=96,H=56,W=56,K=24,R=1,S=1
conv2d:N=1,C=24,H=56,W=56,K=144,R=1,S=1     2
conv2d:N=1,C=144,H=56,W=56,K=24,R=1,S=1
conv2d:N=1,C=144,H=28,W=28,K=32,R=1,S=1
conv2d:N=1,C=32,H=28,W=28,K=192,R=1,S=1     3
conv2d:N=1,C=192,H=28,W=28,K=32,R=1,S=1     2
conv2d:N=1,C=192,H=14,W=14,K=64,R=1,S=1
conv2d:N=1,C=64,H=14,W=14,K=384,R=1,S=1     4
conv2d:N=1,C=384,H=14,W=14,K=64,R=1,S=1     3
conv2d:N=1,C=384,H=14,W=14,K=96,R=1,S=1
conv2d:N=1,C=96,H=14,W=14,K=576,R=1,S=1     3
conv2d:N=1,C=576,H=14,W=14,K=96,R=1,S=1     2
conv2d:N=1,C=576,H=7,W=7,K=160,R=1,S=1
conv2d:N=1,C=160,H=7,W=7,K=960,R=1,S=1      3
conv2d:N=1,C=960,H=7,W=7,K=160,R=1,S=1      2
conv2d:N=1,C=960,H=7,W=7,K=320,R=1,S=1
conv2d:N=1,C=320,H=7,W=7,K=1280,R=1,S=1
gemm:M=1,N=1000,K=1280
)";

// BERT-base encoder at batch 1, sequence 128: 12 layers of 12 heads (64 wide) and hidden 768.
constexpr std::string_view kBert =
    R"(# BERT-base at batch 1, sequence 128: the GEMMs of its 12 encoder layers
# Q, K and V projections and the attention output projection: 4 per layer
gemm:M=128,N=768,K=768       48
# attention scores Q K^T and their product with V, per head: 12 heads x 12 layers
gemm:M=128,N=128,K=64        144
gemm:M=128,N=64,K=128        144
# feed-forward up and down
gemm:M=128,N=3072,K=768      12
gemm:M=128,N=768,K=3072      12
# pooler
gemm:M=1,N=768,K=768
)";

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kModels = {{
    {"bert", kBert},
    {"mobilenetv2", kMobilenetV2},
    {"resnet50", kResnet50},
}};

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : kModels) {
    names.emplace_back(name);
  }
  return names;
}

std::string_view BuiltinModelText(std::string_view name) {
  for (const auto& [known, text] : kModels) {
    if (known == name) {
      return text;
    }
  }
  return {};
}

}  // namespace tune
