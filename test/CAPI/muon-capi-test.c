/*===- muon-capi-test.c - The muon C API from a C99 program -------------===*\
|*                                                                            *|
|* Registers muon's dialects (muonRegisterAllDialects only), parses a module   *|
|* with one muon.step, prints its report and the plan of parameter 0, builds  *|
|* and runs the muon-to-llvm pipeline and prints the lowered module; checks   *|
|* that an unknown target and a stack bound below -1 are refused. Run by      *|
|* test/CAPI/capi.test.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"
#include "muon-c/Dialects.h"
#include "muon-c/Pipeline.h"
#include "muon-c/Step.h"

#include <stdio.h>

static const char *kModule =
    "dist.mesh @m [dp = 2, tp = 2]\n"
    "!t = !dist.tensor<8x4xf32, @m, [shard<0>, shard<1>]>\n"
    "func.func @step(%p: !t, %g: !t, %m: !t) -> (!t, !t) {\n"
    "  %r:2 = muon.step params(%p : !t) grads(%g : !t) momenta(%m : !t) "
    "{lr = 0.02 : f64}\n"
    "  return %r#0, %r#1 : !t, !t\n"
    "}\n";

/* Prints a piece of text as it comes. */
static void printText(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

/* Prints one plan step per line. */
static void printPlanLine(MlirStringRef line, void *userData) {
  (void)userData;
  printf("plan: %.*s\n", (int)line.length, line.data);
}

/* Collects an error message (possibly in pieces) into a buffer. */
typedef struct Message {
  char text[512];
  size_t length;
} Message;

static void collectMessage(MlirStringRef piece, void *userData) {
  Message *message = (Message *)userData;
  size_t room = sizeof(message->text) - 1 - message->length;
  size_t n = piece.length < room ? piece.length : room;
  size_t i;
  for (i = 0; i < n; ++i)
    message->text[message->length + i] = piece.data[i];
  message->length += n;
  message->text[message->length] = '\0';
}

static int lower(MlirContext context, MlirModule module) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  Message error = {{0}, 0};
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  int status = 0;
  if (mlirLogicalResultIsFailure(
          muonBuildMuonToLLVMPipeline(opm, options, collectMessage, &error))) {
    fprintf(stderr, "building the pipeline failed: %s\n", error.text);
    status = 1;
  } else if (mlirLogicalResultIsFailure(
                 mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    fprintf(stderr, "running the pipeline failed\n");
    status = 1;
  } else {
    mlirOperationPrint(mlirModuleGetOperation(module), printText, stdout);
    printf("\n");
  }
  mlirPassManagerDestroy(pm);
  return status;
}

/* Building the pipeline with `options` must fail with a message, which is
   printed; `what` names the options in the failure lines. */
static int refused(MlirContext context, MuonLLVMPipelineOptions options,
                   const char *what) {
  MlirPassManager pm = mlirPassManagerCreate(context);
  Message error = {{0}, 0};
  int status = 0;
  if (mlirLogicalResultIsSuccess(muonBuildMuonToLLVMPipeline(
          mlirPassManagerGetAsOpPassManager(pm), options, collectMessage,
          &error))) {
    fprintf(stderr, "%s was accepted\n", what);
    status = 1;
  } else if (error.length == 0) {
    fprintf(stderr, "%s failed without a message\n", what);
    status = 1;
  } else {
    printf("error: %s\n", error.text);
  }
  mlirPassManagerDestroy(pm);
  return status;
}

/* An unknown target, and a stack bound below -1, are refused. */
static int badOptions(MlirContext context) {
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  int status;
  if (options.nsStackBytes != -1) {
    fprintf(stderr, "the default nsStackBytes is not -1\n");
    return 1;
  }
  options.target = mlirStringRefCreateFromCString("gpu");
  status = refused(context, options, "target gpu");
  options = muonLLVMPipelineOptionsDefault();
  options.nsStackBytes = -5;
  if (status == 0)
    status = refused(context, options, "nsStackBytes -5");
  return status;
}

/* muonRunMuonToLLVMPipeline: the same lowering in one call (a fresh parse of
   the module), and the unknown target refused with its message. */
static int runPipeline(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  MuonLLVMPipelineOptions options = muonLLVMPipelineOptionsDefault();
  Message error = {{0}, 0};
  int status = 0;
  if (mlirLogicalResultIsFailure(muonRunMuonToLLVMPipeline(
          mlirModuleGetOperation(module), options, collectMessage, &error))) {
    fprintf(stderr, "muonRunMuonToLLVMPipeline failed: %s\n", error.text);
    status = 1;
  } else {
    printf("run: lowered, %s\n",
           muonModuleNumSteps(mlirModuleGetOperation(module)) == 0
               ? "no muon.step left"
               : "a muon.step left");
  }
  options.target = mlirStringRefCreateFromCString("gpu");
  if (status == 0 &&
      mlirLogicalResultIsSuccess(muonRunMuonToLLVMPipeline(
          mlirModuleGetOperation(module), options, collectMessage, &error))) {
    fprintf(stderr, "target gpu was accepted by muonRunMuonToLLVMPipeline\n");
    status = 1;
  } else if (status == 0) {
    printf("run %s\n", error.text);
  }
  mlirModuleDestroy(module);
  return status;
}

static int run(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kModule));
  MlirOperation step;
  intptr_t numSteps;
  int status = 0;
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "cannot parse the module\n");
    return 1;
  }
  numSteps = muonModuleNumSteps(mlirModuleGetOperation(module));
  printf("steps: %ld\n", (long)numSteps);
  step = muonModuleGetStep(mlirModuleGetOperation(module), 0);
  if (numSteps != 1 || mlirOperationIsNull(step) ||
      !mlirOperationIsNull(
          muonModuleGetStep(mlirModuleGetOperation(module), 1))) {
    fprintf(stderr, "expected exactly one muon.step\n");
    status = 1;
  } else if (muonStepNumParams(step) != 1) {
    fprintf(stderr, "expected one parameter, got %ld\n",
            (long)muonStepNumParams(step));
    status = 1;
  } else if (mlirLogicalResultIsFailure(muonStepReport(
                 mlirModuleGetOperation(module), printText, stdout))) {
    fprintf(stderr, "muonStepReport failed\n");
    status = 1;
  } else if (mlirLogicalResultIsFailure(
                 muonStepPlan(step, 0, printPlanLine, NULL))) {
    fprintf(stderr, "muonStepPlan failed\n");
    status = 1;
  } else {
    status = lower(context, module);
  }
  mlirModuleDestroy(module);
  if (status == 0)
    status = badOptions(context);
  if (status == 0)
    status = runPipeline(context);
  return status;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  MlirContext context;
  int status;
  muonRegisterAllDialects(registry);
  context = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);
  status = run(context);
  mlirContextDestroy(context);
  fflush(stdout);
  return status;
}
