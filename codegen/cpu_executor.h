// Runs compiled kernels over the tensors of one graph: checks and binds the
// inputs, points kernels at constants in place, allocates every kernel output,
// calls the kernels in order (stopping between them when cancelled), and
// returns every boundary tensor by ValueId.index. Reshape / Identity outside
// groups are aliases: they share their source's storage while running and get
// their own copy in the result.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"

namespace fuselens {

struct ExecKernel {
  std::string name;
  void (*fn)(void** args) = nullptr;
  std::vector<ValueId> inputs;  // the kernel's params, inputs then outputs
  std::vector<ValueId> outputs;
  // Input params the compiler supplies (prepacked constants), by param position;
  // the graph values in `inputs` fill the other input positions in order.
  std::map<size_t, std::shared_ptr<const TensorData>> prepacked;
};

class CpuExecutor {
 public:
  // aliases: (value, the value whose storage it shares), in topological order.
  CpuExecutor(std::shared_ptr<const Graph> g, std::vector<ExecKernel> kernels,
              std::vector<std::pair<ValueId, ValueId>> aliases);

  Expected<std::vector<std::optional<TensorData>>> run(
      const std::map<std::string, TensorData>& inputs, const CancelToken& cancel) const;

 private:
  Status bindInputs(const std::map<std::string, TensorData>& inputs,
                    std::vector<std::optional<TensorData>>& slots) const;
  ValueId storageOf(ValueId v) const;

  std::shared_ptr<const Graph> g_;
  std::vector<ExecKernel> kernels_;
  std::vector<std::pair<ValueId, ValueId>> aliases_;
  std::map<int32_t, ValueId> aliasSource_;
};

}  // namespace fuselens
