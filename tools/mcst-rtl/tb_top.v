// Harness top for the MCST RTL (serega-drakon/MCST_Lab_DSP_GPU): TS + 16 Cores + sh_mem,
// without EnvMem / VGA / SRAM. Task memory and shared memory come from hex files
// (+tm=FILE: 64 lines of 256-bit frames, MSB first; +mem=FILE: 4096 lines of bytes).
// Ends at the halt of mcst-dialect.md 3.4 (or a frame sync), or at +maxcycles=N.
`include "Core.v"
`include "TS.v"
`include "sh_mem.v"

module tb_top(input wire clk, input wire reset);
    reg [`TM_WIDTH_RANGE] tm [`TM_DEPTH_RANGE];
    reg [7:0] mem_init [0:4095];
    wire [`TM_RANGE] env_task_memory;
    genvar i, j;
    generate for (i = 0; i < `TASK_MEM_DEPTH; i = i + 1) begin : tmw
        assign env_task_memory[`ENV_TASK_MEMORY_RANGE(i)] = tm[i];
    end endgenerate

    wire [`CORES_RANGE]             init_R0_flag;
    wire [`REG_BUS_RANGE]           init_R0_data;
    wire [`INSN_BUS_RANGE]          insn_data;
    wire [`CORES_RANGE]             Start;
    wire [`CORES_RANGE]             Ready;
    wire [`INSN_LOAD_COUNTER_RANGE] insn_load_counter;
    wire [`REG_RANGE]       rd_data_M   [`CORES_RANGE];
    wire                    ready_M     [`CORES_RANGE];
    wire [`REG_RANGE]       wr_data_M   [`CORES_RANGE];
    wire [`ADDR_RANGE]      addr_M      [`CORES_RANGE];
    wire [`ENABLE_RANGE]    enable_M    [`CORES_RANGE];
    wire ts_vga_en;
    wire vga_end;

    Task_Scheduler TS(
        .clk(clk), .reset(reset), .env_task_memory(env_task_memory),
        .Ready(Ready), .Start(Start), .Insn_Load_Counter(insn_load_counter),
        .Insn_Data(insn_data), .Init_R0_Vect(init_R0_flag), .Init_R0(init_R0_data),
        .vga_en(ts_vga_en), .vga_end(vga_end));

    generate for (i = 0; i < `NUM_OF_CORES; i = i + 1) begin : array_cores
        Core #(i) Core_i (
            .clk(clk), .reset(reset),
            .init_R0_flag(init_R0_flag[i]),
            .init_R0_data(init_R0_data[(i + 1) * `REG_SIZE - 1 : i * `REG_SIZE]),
            .insn_data(insn_data), .insn_load_counter(insn_load_counter),
            .Start(Start[i]), .Ready(Ready[i]),
            .rd_data_M(rd_data_M[i]), .ready_M(ready_M[i]), .wr_data_M(wr_data_M[i]),
            .addr_M(addr_M[i]), .enable_M(enable_M[i]));
    end endgenerate

    wire [`ENABLE_BUS_RANGE] enable_arb;
    wire [`ADDR_BUS_RANGE]   addr_arb;
    wire [`REG_BUS_RANGE]    wr_data_arb;
    wire [`REG_BUS_RANGE]    rd_data_arb;
    wire [`CORES_RANGE]      ready_arb;
    generate for (i = 0; i < `NUM_OF_CORES; i = i + 1) begin : arbw
        assign enable_arb[`ENABLE_SIZE * (i + 1) - 1 : `ENABLE_SIZE * i] = enable_M[i];
        assign addr_arb[`ADDR_SIZE * (i + 1) - 1 : `ADDR_SIZE * i] = addr_M[i];
        assign wr_data_arb[`REG_SIZE * (i + 1) - 1 : `REG_SIZE * i] = wr_data_M[i];
        assign rd_data_M[i] = rd_data_arb[`REG_SIZE * (i + 1) - 1 : `REG_SIZE * i];
        assign ready_M[i] = ready_arb[i];
    end endgenerate

    // VGA copy-out cut: the memory never sees vga_en (so no bank is stolen), vga_black = 0.
    sh_mem sh_mem(
        .clk(clk), .reset(reset), .enable(enable_arb), .addr(addr_arb),
        .wr_data(wr_data_arb), .rd_data(rd_data_arb), .ready(ready_arb),
        .vga_en(1'b0), .vga_black(1'b0), .vga_data(), .vga_addr_copy(),
        .vga_copy(), .vga_end(vga_end));

    // ---------------- loading ----------------
    string tmfile, memfile;
    integer maxcycles;
    reg trace = 0;
    integer k;
    initial begin
        for (k = 0; k < 64; k = k + 1) tm[k] = 0;
        for (k = 0; k < 4096; k = k + 1) mem_init[k] = 0;
        if ($value$plusargs("tm=%s", tmfile)) $readmemh(tmfile, tm);
        else begin $display("ERROR need +tm=FILE"); $finish; end
        if ($value$plusargs("mem=%s", memfile)) $readmemh(memfile, mem_init);
        if ($test$plusargs("trace")) trace = 1;
        if (!$value$plusargs("maxcycles=%d", maxcycles)) maxcycles = 10000000;
`define MI(b) for (k = 0; k < 256; k = k + 1) sh_mem.connection_banks[b].bank_0.memory[k] = mem_init[b*256 + k];
        `MI(0) `MI(1) `MI(2) `MI(3) `MI(4) `MI(5) `MI(6) `MI(7)
        `MI(8) `MI(9) `MI(10) `MI(11) `MI(12) `MI(13) `MI(14) `MI(15)
    end

    // ---------------- end of run (mcst-dialect.md 3.4) ----------------
    wire [255:0] fr = tm[TS.Task_Pointer];
    wire at_stop_cf = fr[14] & (fr[5:0] == 0);
    wire halt = (TS.Insn_Frame_Num == 0) & (&Ready) & at_stop_cf &
                (fr[13:8] == TS.Task_Pointer) |
                (TS.Insn_Frame_Num == 0) & (&Ready) & TS.stop_r;  // frame sync: TS.vga_wait_do
    integer cycle = 0;
    reg started = 0;
    integer c, r;
    always @(posedge clk) begin
        if (!reset) begin
            if (halt || cycle >= maxcycles) begin
                $display("CYCLES %0d%s", cycle, halt ? "" : " (cap)");
                $display("TP %0d", TS.Task_Pointer);
                dump_regs();
                for (c = 0; c < 4096; c = c + 32) begin
                    $write("MEM %03x", c);
                    for (r = 0; r < 32; r = r + 1) $write(" %02x", mem_read(c + r));
                    $write("\n");
                end
                $finish;
            end
            if (trace) $display("T %0d TP=%0d n=%0d cnt=%0d Ready=%04x Start=%04x CAV=%04x fence=%0d stop_r=%0d vga_wait=%0d halt=%0d",
                cycle, TS.Task_Pointer, TS.Insn_Frame_Num, TS.INSN_LOAD_CNT, Ready, Start, TS.Core_Active_Vect, TS.fence, TS.stop_r, TS.vga_wait, halt);
            cycle <= cycle + 1;
        end
    end
    function [7:0] mem_read(input integer a);
        case (a >> 8)
`define MR(b) b: mem_read = sh_mem.connection_banks[b].bank_0.memory[a & 255];
            `MR(0) `MR(1) `MR(2) `MR(3) `MR(4) `MR(5) `MR(6) `MR(7)
            `MR(8) `MR(9) `MR(10) `MR(11) `MR(12) `MR(13) `MR(14) `MR(15)
            default: mem_read = 0;
        endcase
    endfunction
    task dump_regs;
`define DR(cc) $display("REGS %0d %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x", cc, \
   array_cores[cc].Core_i.RegisterFile.r[0], array_cores[cc].Core_i.RegisterFile.r[1], array_cores[cc].Core_i.RegisterFile.r[2], array_cores[cc].Core_i.RegisterFile.r[3], \
   array_cores[cc].Core_i.RegisterFile.r[4], array_cores[cc].Core_i.RegisterFile.r[5], array_cores[cc].Core_i.RegisterFile.r[6], array_cores[cc].Core_i.RegisterFile.r[7], \
   array_cores[cc].Core_i.RegisterFile.r[8], array_cores[cc].Core_i.RegisterFile.r[9], array_cores[cc].Core_i.RegisterFile.r[10], array_cores[cc].Core_i.RegisterFile.r[11], \
   array_cores[cc].Core_i.RegisterFile.r[12], array_cores[cc].Core_i.RegisterFile.r[13], array_cores[cc].Core_i.RegisterFile.r[14], array_cores[cc].Core_i.RegisterFile.r[15]);
        begin
        `DR(0) `DR(1) `DR(2) `DR(3) `DR(4) `DR(5) `DR(6) `DR(7)
        `DR(8) `DR(9) `DR(10) `DR(11) `DR(12) `DR(13) `DR(14) `DR(15)
        end
    endtask
endmodule
