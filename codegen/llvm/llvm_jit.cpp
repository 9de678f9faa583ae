// The JIT: kernels -> keys -> (disk cache | parallel LLVM) -> objects -> LLJIT.
//
//   funcs ──kernelKey──> keys ──dedupe──> distinct kernels
//                                          ├─ cache hit:  object bytes from disk
//                                          └─ miss: worker threads, each with its own
//                                             LLVMContext + TargetMachine per kernel:
//                                             emit -> verify -> -O -> object (stored)
//   objects ──addObjectFile──> one LLJIT ──one lookup──> a pointer per func
//
// Each kernel is its own object, named by its key (fl_<key>), so objects from
// different threads, compiles or processes never collide and each caches
// alone. The target machines come from the JIT's own builder (the host CPU and
// features, the JIT's code model), so an object is what the JIT would have
// made from IR. Kernels resolve libm and malloc/free from the process and the
// parallel runtime from an absolute symbol.
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "codegen/llvm/kernel_key.h"
#include "codegen/llvm/llvm_backend.h"
#include "codegen/llvm/llvm_emit.h"
#include "codegen/llvm/llvm_optimize.h"
#include "codegen/llvm/object_cache.h"
#include "codegen/runtime/runtime.h"
#include "codegen/target.h"
#include "emitter_hash.h"  // generated: FUSELENS_EMITTER_HASH

namespace fuselens {

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  CpuTarget target;  // the caller's codegen target, for irText
  int level = 3;
  std::vector<LoopFunc> distinct;  // renamed to their symbols
  std::vector<std::string> names;  // every kernel's name, in compile() order
  std::vector<size_t> distinctOf;  // kernel i -> index into distinct
  mutable std::mutex irMutex;
  mutable std::optional<std::string> ir;
};

JitModule::JitModule() : impl_(std::make_unique<Impl>()) {}
JitModule::~JitModule() = default;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status llvmError(llvm::Error e, const std::string& what) {
  return Status::error(what + ": " + llvm::toString(std::move(e)), "LLVM backend");
}

llvm::CodeGenOpt::Level cgLevel(int level) {
  static const llvm::CodeGenOpt::Level levels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                   llvm::CodeGenOpt::Default,
                                                   llvm::CodeGenOpt::Aggressive};
  return levels[level];
}

// Remarks and warnings (e.g. "loop not vectorized" for a hinted loop that
// calls tanhf) would go to stderr: a hint LLVM declines is not a failure.
void quietDiagnostics(llvm::LLVMContext& ctx) {
  ctx.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo& d, void*) {
        if (d.getSeverity() == llvm::DS_Error) {
          llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
          d.print(printer);
          llvm::errs() << "\n";
        }
      },
      nullptr);
}

// Everything but the loop IR that decides the machine code. The loop IR of a kernel (the rest of
// the key) does not change when the LLVM IR emitted for it does, so the hash of the emitter's
// sources stands for the emitter: a cache filled by another build is not served.
std::string targetContext(const llvm::orc::JITTargetMachineBuilder& jtmb, int level) {
  return std::string("fuselens-object-v2 emitter ") + FUSELENS_EMITTER_HASH + " llvm " +
         LLVM_VERSION_STRING + " O" + std::to_string(level) + " " + jtmb.getTargetTriple().str() +
         " cpu " + jtmb.getCPU() + " features " + jtmb.getFeatures().getString() + " vector " +
         std::to_string(codegenTarget().vectorBits);
}

struct StepTimes {
  double emit = 0, optimize = 0, object = 0;
};

// One kernel, alone in its own context and module, to an ELF object in memory.
Expected<std::string> buildObject(const LoopFunc& f, llvm::TargetMachine& tm, int level,
                                  StepTimes& times) {
  auto t0 = Clock::now();
  llvm::LLVMContext ctx;
  quietDiagnostics(ctx);
  llvm::Module mod("fuselens." + f.name, ctx);
  mod.setDataLayout(tm.createDataLayout());
  mod.setTargetTriple(tm.getTargetTriple().str());
  FL_RETURN_IF_ERROR(emitLoopFunc(mod, f));
  std::string msg;
  llvm::raw_string_ostream vos(msg);
  if (llvm::verifyModule(mod, &vos))
    return Status::error("internal: the module does not verify: " + vos.str(), "LLVM backend");
  times.emit += secondsSince(t0);
  t0 = Clock::now();
  optimizeModule(mod, tm, level);
  times.optimize += secondsSince(t0);
  t0 = Clock::now();
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    return Status::error("the target cannot emit objects", "LLVM backend");
  pm.run(mod);
  times.object += secondsSince(t0);
  return std::string(buf.data(), buf.size());
}

// Roughly how much LLVM IR a kernel becomes: unrolled loops are replicated by
// the emitter, so a register tile's body counts once per copy. Used only to
// start the biggest kernels first, so one large kernel does not finish alone.
double emittedSize(const StmtRef& s) {
  double n = 1;
  for (const StmtRef& c : s->body) n += emittedSize(c);
  return s->kind == StmtKind::For && s->forKind == ForKind::Unrolled ? n * double(s->extent) : n;
}

// How many compile threads: FUSELENS_COMPILE_THREADS, else every hardware thread.
int compileThreads(size_t work) {
  int n = int(std::max(1u, std::thread::hardware_concurrency()));
  if (const char* env = std::getenv("FUSELENS_COMPILE_THREADS"); env && std::atoi(env) > 0)
    n = std::atoi(env);
  return int(std::min<size_t>(size_t(n), std::max<size_t>(work, 1)));
}

// Compiles distinct[todo[k]] for every k on `threads` threads; objects[i] and
// errors[i] are indexed like `distinct`. Each thread owns its target machine.
void compileInParallel(const std::vector<LoopFunc>& distinct, const std::vector<size_t>& todo,
                       const llvm::orc::JITTargetMachineBuilder& jtmb, int level, int threads,
                       std::vector<std::string>& objects, std::vector<Status>& errors,
                       StepTimes& total) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  const CpuTarget target = codegenTarget();  // emission sizes vectors from it, per thread
  auto work = [&] {
    ScopedCpuTarget scoped(target);
    StepTimes times;
    auto tm = llvm::orc::JITTargetMachineBuilder(jtmb).createTargetMachine();
    for (size_t k; (k = next++) < todo.size();) {
      size_t i = todo[k];
      if (!tm) {
        errors[i] = Status::error("cannot create a target machine", "LLVM backend");
        continue;
      }
      auto obj = buildObject(distinct[i], **tm, level, times);
      if (obj)
        objects[i] = std::move(*obj);
      else
        errors[i] = obj.status();
    }
    if (!tm) llvm::consumeError(tm.takeError());
    std::lock_guard<std::mutex> lock(mu);
    total.emit += times.emit;
    total.optimize += times.optimize;
    total.object += times.object;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the calling thread is one of them
  for (std::thread& t : pool) t.join();
}

// A JIT that resolves the process's symbols and the parallel runtime.
Expected<std::unique_ptr<llvm::orc::LLJIT>> makeJit(llvm::orc::JITTargetMachineBuilder jtmb) {
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) return llvmError(jit.takeError(), "cannot create the JIT");
  llvm::orc::JITDylib& lib = (*jit)->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) return llvmError(process.takeError(), "cannot search the process for symbols");
  lib.addGenerator(std::move(*process));
  llvm::orc::SymbolMap runtime;
  runtime[(*jit)->mangleAndIntern(kParallelForSymbol)] =
      llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(&fuselens_parallel_for),
                               llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (auto e = lib.define(llvm::orc::absoluteSymbols(std::move(runtime))))
    return llvmError(std::move(e), "cannot define the runtime symbols");
  return std::move(*jit);
}

}  // namespace

Expected<std::unique_ptr<JitModule>> JitModule::compile(const std::vector<const LoopFunc*>& funcs,
                                                        int optLevel,
                                                        const std::vector<std::string>& contexts) {
  auto start = Clock::now();
  initNativeTarget();
  int level = std::clamp(optLevel, 0, 3);
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return llvmError(jtmb.takeError(), "cannot describe the host CPU");
  jtmb->setCodeGenOptLevel(cgLevel(level));

  // 1. Keys, and the distinct kernels they name.
  std::unique_ptr<JitModule> out(new JitModule());
  Impl& im = *out->impl_;
  im.target = codegenTarget();
  im.level = level;
  const std::string base = targetContext(*jtmb, level);
  std::map<std::string, size_t> byKey;
  std::vector<std::string> keys;
  for (size_t i = 0; i < funcs.size(); ++i) {
    std::string ctx = base + (i < contexts.size() ? "\n" + contexts[i] : "");
    std::string key = kernelKey(*funcs[i], ctx);
    auto [it, fresh] = byKey.emplace(key, im.distinct.size());
    if (fresh) {
      im.distinct.push_back(*funcs[i]);  // shares the statement tree
      im.distinct.back().name = "fl_" + key;
      keys.push_back(key);
    }
    im.distinctOf.push_back(it->second);
    im.names.push_back(funcs[i]->name);
  }
  double keySeconds = secondsSince(start);

  // 2. Objects: from the disk cache, else compiled in parallel (and stored).
  ObjectCache cache = ObjectCache::fromEnvironment();
  std::vector<std::string> objects(im.distinct.size());
  std::vector<Status> errors(im.distinct.size(), Status::ok());
  std::vector<size_t> todo;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (auto hit = cache.load(keys[i]))
      objects[i] = std::move(*hit);
    else
      todo.push_back(i);
  }
  std::vector<double> size(im.distinct.size(), 0);
  for (size_t i : todo) size[i] = im.distinct[i].body ? emittedSize(im.distinct[i].body) : 0;
  std::stable_sort(todo.begin(), todo.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  out->threads = compileThreads(todo.size());
  StepTimes times;
  compileInParallel(im.distinct, todo, *jtmb, level, out->threads, objects, errors, times);
  for (const Status& st : errors) FL_RETURN_IF_ERROR(st);
  for (size_t i : todo) cache.store(keys[i], objects[i]);
  cache.trim();

  // 3. One JIT links them all; one lookup materializes every kernel.
  auto t0 = Clock::now();
  auto jit = makeJit(*jtmb);
  if (!jit) return jit.status();
  llvm::orc::SymbolLookupSet wanted;
  for (size_t i = 0; i < objects.size(); ++i) {
    auto buf = llvm::MemoryBuffer::getMemBufferCopy(objects[i], im.distinct[i].name);
    if (auto e = (*jit)->addObjectFile(std::move(buf)))
      return llvmError(std::move(e), "cannot add kernel " + im.distinct[i].name + " to the JIT");
    wanted.add((*jit)->mangleAndIntern(im.distinct[i].name));
  }
  llvm::orc::JITDylib& lib = (*jit)->getMainJITDylib();
  auto syms = (*jit)->getExecutionSession().lookup(llvm::orc::makeJITDylibSearchOrder(&lib),
                                                   std::move(wanted));
  if (!syms) return llvmError(syms.takeError(), "cannot link the kernels");
  std::vector<KernelFn> fns;
  for (const LoopFunc& f : im.distinct) {
    auto it = syms->find((*jit)->mangleAndIntern(f.name));
    if (it == syms->end()) return Status::error("the JIT did not define " + f.name, "LLVM backend");
    fns.push_back(llvm::jitTargetAddressToPointer<KernelFn>(it->second.getAddress()));
  }
  for (size_t d : im.distinctOf) out->fns_.push_back(fns[d]);
  im.jit = std::move(*jit);
  out->linkSeconds = secondsSince(t0);
  out->emitSeconds = keySeconds + times.emit;
  out->optimizeSeconds = times.optimize;
  out->codegenSeconds = times.object;
  out->kernels = funcs.size();
  out->unique = im.distinct.size();
  out->compiled = todo.size();
  out->cached = out->unique - out->compiled;
  out->cacheDir = cache.dir();
  out->wallSeconds = secondsSince(start);
  return out;
}

std::string JitModule::irText() const {
  const Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.irMutex);
  if (im.ir) return *im.ir;
  std::string text = "; kernel -> symbol (identical kernels share one function)\n";
  for (size_t i = 0; i < im.names.size(); ++i)
    text += "; " + im.names[i] + " -> @" + im.distinct[im.distinctOf[i]].name + "\n";
  ScopedCpuTarget scoped(im.target);
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return text + "; cannot describe the host CPU\n";
  jtmb->setCodeGenOptLevel(cgLevel(im.level));
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return text + "; cannot create a target machine\n";
  }
  llvm::LLVMContext ctx;
  quietDiagnostics(ctx);
  llvm::Module mod("fuselens", ctx);
  mod.setDataLayout((*tm)->createDataLayout());
  mod.setTargetTriple((*tm)->getTargetTriple().str());
  for (const LoopFunc& f : im.distinct)
    if (Status st = emitLoopFunc(mod, f); !st) return text + "; " + st.message() + "\n";
  optimizeModule(mod, **tm, im.level);
  llvm::raw_string_ostream os(text);
  mod.print(os, nullptr);
  os.flush();
  im.ir = text;
  return text;
}

}  // namespace fuselens
