// The one translation unit with ORC and PassBuilder headers (slow to compile:
// keep it small). Emission lives in llvm_emit.cpp; here the module is
// optimized for the host CPU (so the vectorizer sees the real vector width),
// printed for llvmIrText(), and JIT-compiled. Kernels resolve libm (expf,
// tanhf) and malloc/free from the process, and the parallel runtime from an
// absolute symbol.
#include "codegen/llvm_backend.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

#include "codegen/llvm_emit.h"
#include "codegen/runtime.h"

namespace fuselens {

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule() : impl_(std::make_unique<Impl>()) {}
JitModule::~JitModule() = default;

namespace {

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
  auto mod = std::make_unique<llvm::Module>("fuselens", *ctx);
  mod->setDataLayout((*tm)->createDataLayout());
  mod->setTargetTriple((*tm)->getTargetTriple().str());
  for (const LoopFunc* f : funcs) FL_RETURN_IF_ERROR(emitLoopFunc(*mod, *f));
  std::string msg;
  llvm::raw_string_ostream vos(msg);
  if (llvm::verifyModule(*mod, &vos))
    return Status::error("internal: the module does not verify: " + vos.str(), "LLVM backend");
  optimize(*mod, **tm, level);

  std::unique_ptr<JitModule> out(new JitModule());
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
  return out;
}

}  // namespace fuselens
