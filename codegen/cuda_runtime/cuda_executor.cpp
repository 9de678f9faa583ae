#include "codegen/cuda_runtime/cuda_executor.h"

#include "codegen/cuda_runtime/cuda_driver.h"
#include "codegen/cuda_runtime/cuda_lt_run.h"

namespace fuselens {
namespace {

using namespace cudadrv;

// Every driver object of one run, released in reverse on every path out.
class DeviceRun {
 public:
  explicit DeviceRun(const Api& api) : a_(api) {}
  ~DeviceRun() {
    for (Handle e : events_) a_.eventDestroy(e);
    for (DevicePtr p : allocations_) a_.memFree(p);
    if (stream_) a_.streamDestroy(stream_);
    if (module_) a_.moduleUnload(module_);
    if (context_) a_.primaryCtxRelease(device_);
  }

  Status check(Result r, const std::string& what) const {
    if (r == 0) return Status::ok();
    return Status::error("cannot " + what + ": " + errorText(a_, r), "CUDA executor");
  }

  Status start(const std::string& ptx) {
    FL_RETURN_IF_ERROR(check(a_.deviceGet(&device_, 0), "open device 0"));
    FL_RETURN_IF_ERROR(check(a_.primaryCtxRetain(&context_, device_), "create a context"));
    FL_RETURN_IF_ERROR(check(a_.ctxSetCurrent(context_), "make the context current"));
    FL_RETURN_IF_ERROR(check(a_.moduleLoadData(&module_, ptx.c_str()), "load the PTX module"));
    return check(a_.streamCreate(&stream_, 0), "create a stream");
  }

  Expected<DevicePtr> alloc(size_t bytes) {
    DevicePtr p = 0;
    FL_RETURN_IF_ERROR(check(a_.memAlloc(&p, std::max<size_t>(bytes, 1)),
                             "allocate " + std::to_string(bytes) + " device bytes"));
    allocations_.push_back(p);
    return p;
  }

  Expected<Handle> event() {
    Handle e = nullptr;
    FL_RETURN_IF_ERROR(check(a_.eventCreate(&e, 0), "create an event"));
    events_.push_back(e);
    return e;
  }

  Expected<Handle> function(const std::string& name) {
    Handle f = nullptr;
    FL_RETURN_IF_ERROR(check(a_.moduleGetFunction(&f, module_, name.c_str()), "find " + name));
    return f;
  }

  Handle stream() const { return stream_; }

 private:
  const Api& a_;
  Device device_ = 0;
  Handle context_ = nullptr, module_ = nullptr, stream_ = nullptr;
  std::vector<DevicePtr> allocations_;
  std::vector<Handle> events_;
};

}  // namespace

bool cudaDeviceAvailable(std::string* why) { return driver(why) != nullptr; }

Expected<CudaRunResult> runOnCuda(const CudaLaunchPlan& plan, const std::string& ptx,
                                  const std::vector<TensorData>& inputs,
                                  const CancelToken& cancel) {
  std::string why;
  const Api* api = driver(&why);
  if (!api) return Status::error(why);
  if (inputs.size() != plan.inputs.size())
    return Status::error("the CUDA run needs " + std::to_string(plan.inputs.size()) +
                         " inputs, not " + std::to_string(inputs.size()));
  const Api& a = *api;
  DeviceRun run(a);
  FL_RETURN_IF_ERROR(run.start(ptx));
  std::vector<DevicePtr> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (int64_t(inputs[i].bytes.size()) != plan.inputs[i].bytes)
      return Status::error("input '" + plan.inputs[i].name + "' has " +
                           std::to_string(inputs[i].bytes.size()) + " bytes, the plan " +
                           std::to_string(plan.inputs[i].bytes));
    auto p = run.alloc(inputs[i].bytes.size());
    if (!p) return p.status();
    FL_RETURN_IF_ERROR(run.check(a.memcpyHtoD(*p, inputs[i].bytes.data(), inputs[i].bytes.size()),
                                 "copy input '" + plan.inputs[i].name + "' in"));
    in.push_back(*p);
  }
  for (const CudaTensorSpec& o : plan.outputs) {
    auto p = run.alloc(size_t(o.bytes));
    if (!p) return p.status();
    out.push_back(*p);
  }
  auto arena = run.alloc(size_t(plan.memory.blockBytes()));
  if (!arena) return arena.status();
  auto weights = run.alloc(plan.weights.size());
  if (!weights) return weights.status();
  if (!plan.weights.empty())
    FL_RETURN_IF_ERROR(run.check(a.memcpyHtoD(*weights, plan.weights.data(), plan.weights.size()),
                                 "upload the weights"));
  auto where = [&](const CudaArg& arg) -> DevicePtr {
    switch (arg.kind) {
      case CudaArg::Kind::Input:
        return in[size_t(arg.index)];
      case CudaArg::Kind::Output:
        return out[size_t(arg.index)];
      case CudaArg::Kind::Arena:
        return *arena + DevicePtr(arg.index);
      case CudaArg::Kind::Weights:
        return *weights + DevicePtr(arg.index);
    }
    return 0;
  };
  // Kernels the plan offloads run as cublasLtMatmul calls (cuda_lt_run.h).
  std::unique_ptr<CudaLtRun> lt;
  if (cudaLibraryUsed(plan)) {
    auto ws = run.alloc(kCudaLtWorkspaceBytes);
    if (!ws) return ws.status();
    auto opened = CudaLtRun::open(*ws, kCudaLtWorkspaceBytes);
    if (!opened) return opened.status();
    lt = std::move(*opened);
  }
  std::vector<Handle> marks;
  for (size_t k = 0; k <= plan.module.kernels.size(); ++k) {
    auto e = run.event();
    if (!e) return e.status();
    marks.push_back(*e);
  }
  for (size_t k = 0; k < plan.module.kernels.size(); ++k) {
    if (cancel.cancelled()) return Status::error("CUDA run cancelled");
    std::vector<DevicePtr> values;
    for (const CudaArg& arg : plan.args[k]) values.push_back(where(arg));
    std::vector<void*> params;
    for (DevicePtr& v : values) params.push_back(&v);
    FL_RETURN_IF_ERROR(run.check(a.eventRecord(marks[k], run.stream()), "record an event"));
    if (const CudaLibraryCall* c = k < plan.library.size() ? plan.library[k].call.get() : nullptr) {
      FL_RETURN_IF_ERROR(lt->run(*c, where(c->a), where(c->b), c->hasBias ? where(c->bias) : 0,
                                 where(c->y), run.stream()));
      continue;
    }
    for (const CudaStage& st : plan.module.kernels[k].stages) {
      auto f = run.function(st.name);
      if (!f) return f.status();
      FL_RETURN_IF_ERROR(run.check(
          a.launchKernel(*f, unsigned(st.grid), unsigned(st.gridY), unsigned(st.gridZ),
                         unsigned(st.block), 1, 1, 0, run.stream(), params.data(), nullptr),
          "launch " + st.name));
    }
  }
  FL_RETURN_IF_ERROR(run.check(a.eventRecord(marks.back(), run.stream()), "record an event"));
  FL_RETURN_IF_ERROR(run.check(a.streamSynchronize(run.stream()), "run the kernels"));
  for (const CudaLaunchPlan::OutputCopy& c : plan.copies)
    FL_RETURN_IF_ERROR(
        run.check(a.memcpyDtoD(out[size_t(c.output)], where(c.from), size_t(c.bytes)),
                  "copy output '" + plan.outputs[size_t(c.output)].name + "'"));
  CudaRunResult r;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    TensorData t(plan.outputs[i].dtype, plan.outputs[i].shape);
    FL_RETURN_IF_ERROR(run.check(a.memcpyDtoH(t.bytes.data(), out[i], t.bytes.size()),
                                 "copy output '" + plan.outputs[i].name + "' out"));
    r.outputs.push_back(std::move(t));
  }
  for (size_t k = 0; k + 1 < marks.size(); ++k) {
    float ms = 0;
    a.eventElapsedTime(&ms, marks[k], marks[k + 1]);
    r.kernelMs.push_back(ms);
  }
  float total = 0;
  a.eventElapsedTime(&total, marks.front(), marks.back());
  r.totalMs = total;
  return r;
}

}  // namespace fuselens
