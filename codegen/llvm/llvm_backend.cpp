// The one translation unit with ORC and PassBuilder headers (slow to compile:
// keep it small). Emission lives in llvm_emit.cpp; here the module is
// optimized for the host CPU (so the vectorizer sees the real vector width),
// printed for llvmIrText(), and JIT-compiled. Kernels resolve libm (expf,
// tanhf) and malloc/free from the process, and the parallel runtime from an
// absolute symbol.
#include "codegen/llvm/llvm_backend.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>

#include "codegen/llvm/llvm_emit.h"
#include "codegen/runtime/runtime.h"
#include "codegen/target.h"

namespace fuselens {

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule() : impl_(std::make_unique<Impl>()) {}
JitModule::~JitModule() = default;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Status llvmError(llvm::Error e, const std::string& what) {
  return Status::error(what + ": " + llvm::toString(std::move(e)), "LLVM backend");
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = level >= 2;
  pto.SLPVectorization = level >= 2;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1, llvm::OptimizationLevel::O2,
      llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm = level == 0 ? pb.buildO0DefaultPipeline(levels[0])
                                           : pb.buildPerModuleDefaultPipeline(levels[level]);
  mpm.run(m, mam);
}

}  // namespace

Expected<std::unique_ptr<JitModule>> JitModule::compile(const std::vector<const LoopFunc*>& funcs,
                                                        int optLevel) {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  int level = std::clamp(optLevel, 0, 3);
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return llvmError(jtmb.takeError(), "cannot describe the host CPU");
  static const llvm::CodeGenOpt::Level cgLevels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                     llvm::CodeGenOpt::Default,
                                                     llvm::CodeGenOpt::Aggressive};
  jtmb->setCodeGenOptLevel(cgLevels[level]);
  auto tm = jtmb->createTargetMachine();
  if (!tm) return llvmError(tm.takeError(), "cannot create a target machine");

  auto ctx = std::make_unique<llvm::LLVMContext>();
  // Remarks and warnings (e.g. "loop not vectorized" for a hinted loop that
  // calls tanhf) would go to stderr: a hint LLVM declines is not a failure.
  ctx->setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo& d, void*) {
        if (d.getSeverity() == llvm::DS_Error) {
          llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
          d.print(printer);
          llvm::errs() << "\n";
        }
      },
      nullptr);
  auto t0 = std::chrono::steady_clock::now();
  auto mod = std::make_unique<llvm::Module>("fuselens", *ctx);
  mod->setDataLayout((*tm)->createDataLayout());
  mod->setTargetTriple((*tm)->getTargetTriple().str());
  for (const LoopFunc* f : funcs) FL_RETURN_IF_ERROR(emitLoopFunc(*mod, *f));
  std::string msg;
  llvm::raw_string_ostream vos(msg);
  if (llvm::verifyModule(*mod, &vos))
    return Status::error("internal: the module does not verify: " + vos.str(), "LLVM backend");
  double emitSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  optimize(*mod, **tm, level);
  double optimizeSeconds = secondsSince(t0);

  std::unique_ptr<JitModule> out(new JitModule());
  out->emitSeconds = emitSeconds;
  out->optimizeSeconds = optimizeSeconds;
  t0 = std::chrono::steady_clock::now();
  llvm::raw_string_ostream irOs(out->ir_);
  mod->print(irOs, nullptr);
  irOs.flush();

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
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
  if (auto e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    return llvmError(std::move(e), "cannot add the module to the JIT");
  for (const LoopFunc* f : funcs) {
    auto addr = (*jit)->lookup(f->name);
    if (!addr) return llvmError(addr.takeError(), "cannot find kernel " + f->name);
    out->fns_.push_back(addr->toPtr<KernelFn>());
  }
  out->impl_->jit = std::move(*jit);
  out->codegenSeconds = secondsSince(t0);
  return out;
}

}  // namespace fuselens

namespace fuselens {
namespace {

// Writes via a temp file and a rename, so a reader never sees half a file.
Status writeAtomically(const std::string& path,
                       const std::function<bool(llvm::raw_fd_ostream&)>& w) {
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec) return Status::error("cannot write " + tmp + ": " + ec.message());
    if (!w(os)) return Status::error("cannot emit " + path);
    os.flush();
    if (os.has_error()) return Status::error("cannot write " + tmp + ": " + os.error().message());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::error("cannot rename " + tmp + " to " + path);
  return Status::ok();
}

}  // namespace

Status emitObjectFiles(const std::vector<const LoopFunc*>& funcs,
                       const std::vector<DataGlobal>& globals, int optLevel, const CpuTarget& cpu,
                       const ObjectFiles& out) {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  int level = std::clamp(optLevel, 0, 3);
  std::string triple = llvm::sys::getProcessTriple();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) return Status::error("no LLVM target for " + triple + ": " + err, "LLVM backend");
  // Native: every host feature, on or off. A level: its CPU name and the
  // features it guarantees, nothing of the host's.
  std::string cpuName = cpu.cpu, features = cpu.features;
  if (cpu.native()) {
    cpuName = llvm::sys::getHostCPUName().str();
    features.clear();
    llvm::StringMap<bool> feats;
    if (llvm::sys::getHostCPUFeatures(feats))
      for (const auto& f : feats)
        features += (features.empty() ? "" : ",") + std::string(f.getValue() ? "+" : "-") +
                    f.getKey().str();
  }
  static const llvm::CodeGenOpt::Level cgLevels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                     llvm::CodeGenOpt::Default,
                                                     llvm::CodeGenOpt::Aggressive};
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, cpuName, features, llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, llvm::None, cgLevels[level]));
  if (!tm) return Status::error("cannot create a target machine for " + triple, "LLVM backend");

  llvm::LLVMContext ctx;
  llvm::Module mod("fuselens", ctx);
  mod.setDataLayout(tm->createDataLayout());
  mod.setTargetTriple(triple);
  for (const LoopFunc* f : funcs) FL_RETURN_IF_ERROR(emitLoopFunc(mod, *f));
  // Kernels are internal to the shared library: only its C entry is exported.
  for (llvm::Function& f : mod)
    if (!f.isDeclaration()) f.setVisibility(llvm::GlobalValue::HiddenVisibility);
  for (const DataGlobal& g : globals) {
    llvm::StringRef raw(reinterpret_cast<const char*>(g.data->bytes.data()), g.data->bytes.size());
    llvm::Constant* init =
        llvm::ConstantDataArray::getRaw(raw, g.data->bytes.size(), llvm::Type::getInt8Ty(ctx));
    auto* gv = new llvm::GlobalVariable(mod, init->getType(), true,
                                        llvm::GlobalValue::ExternalLinkage, init, g.name);
    gv->setAlignment(llvm::Align(64));
    gv->setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  std::string msg;
  llvm::raw_string_ostream vos(msg);
  if (llvm::verifyModule(mod, &vos))
    return Status::error("internal: the module does not verify: " + vos.str(), "LLVM backend");
  optimize(mod, *tm, level);

  if (!out.llPath.empty())
    FL_RETURN_IF_ERROR(writeAtomically(out.llPath, [&](llvm::raw_fd_ostream& os) {
      mod.print(os, nullptr);
      return true;
    }));
  auto emit = [&](const std::string& path, llvm::CodeGenFileType kind) {
    return writeAtomically(path, [&](llvm::raw_fd_ostream& os) {
      llvm::legacy::PassManager pm;
      if (tm->addPassesToEmitFile(pm, os, nullptr, kind)) return false;
      pm.run(mod);
      return true;
    });
  };
  if (!out.asmPath.empty()) {
    // Emission runs codegen IR passes over the module: the .s is made from a copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(mod);
    FL_RETURN_IF_ERROR(writeAtomically(out.asmPath, [&](llvm::raw_fd_ostream& os) {
      llvm::legacy::PassManager pm;
      if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile)) return false;
      pm.run(*copy);
      return true;
    }));
  }
  if (!out.objPath.empty()) FL_RETURN_IF_ERROR(emit(out.objPath, llvm::CGFT_ObjectFile));
  return Status::ok();
}

}  // namespace fuselens
