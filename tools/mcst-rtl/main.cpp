#include "Vtb_top.h"
#include "verilated.h"
#include <memory>
int main(int argc, char** argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    auto top = std::make_unique<Vtb_top>(ctx.get());
    top->clk = 0; top->reset = 1; top->eval();
    for (int i = 0; i < 3; i++) { top->clk = 1; top->eval(); top->clk = 0; top->eval(); }
    top->reset = 0; top->eval();
    while (!ctx->gotFinish()) { top->clk = 1; top->eval(); top->clk = 0; top->eval(); }
    top->final();
    return 0;
}
