// The LLVM pipeline both backends share (optimizeModule) and ahead-of-time
// output for export: the kernels as IR text, assembly and a relocatable
// object. The JIT lives in llvm_jit.cpp.
#include "codegen/llvm/llvm_backend.h"

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

#include <cstdio>
#include <functional>
#include <mutex>

#include "codegen/llvm/llvm_emit.h"
#include "codegen/llvm/llvm_optimize.h"
#include "codegen/target.h"

namespace fuselens {

void initNativeTarget() {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, int level) {
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
  initNativeTarget();
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
  optimizeModule(mod, *tm, level);

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
