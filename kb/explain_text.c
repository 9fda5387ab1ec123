// SPDX-License-Identifier: BSD-3-Clause
/*
 * The prose of `topdown explain`: for every Top-Down node and Info metric,
 * what it measures, what usually causes a high value and what to try next.
 *
 * Only prose lives here.  Paths, levels, parents, thresholds and models
 * come from the kb definitions when an entry is looked up (kb/explain.c).
 * Entries follow the tree, top-down and depth first, within each vendor;
 * `topdown explain --list` prints children in this order.  Entries with a
 * ref_path are Intel level-4 nodes topdown does not compute (they need
 * events beyond level 3); they are explained so that readers of perf's
 * output, or of a future deeper collection, find them too.
 *
 * Conventions of the text:
 *   - Intel event names are written as the vendor spells them
 *     (MEM_LOAD_RETIRED.L3_MISS); in perf commands they are lower case,
 *     and on hybrid parts take the PMU prefix: cpu_core/<event>/pp.
 *   - ":pp" asks for a precise (PEBS) sample, so the reported instruction
 *     is the one that caused the event rather than a later one.
 *   - Every hint names a next measurement or a change to try, never a
 *     vague "optimize".
 */
#include <stddef.h>

#include "explain.h"

#define INTEL TD_VENDOR_INTEL
#define ARM TD_VENDOR_ARM
#define AMD TD_VENDOR_AMD

const struct td_explain_text td_explain_texts[] = {

/* ---------------------------------------------------------------- Intel, level 1 */
{
	.vendor = INTEL, .name = "tma_frontend_bound",
	.title = "Frontend Bound",
	.description =
		"Share of issue slots that stayed empty because the frontend (branch "
		"prediction, instruction fetch, decode and the decoded-uop cache) handed "
		"the backend nothing to allocate although the backend could have taken "
		"more. It counts starvation of the pipeline, not work done.",
	.causes = {
		"A hot code footprint larger than the instruction cache, the decoded-uop "
		"cache (DSB) or the instruction TLB: big binaries, many shared libraries, "
		"generated or JIT-compiled code.",
		"Frequent taken branches and refetches after mispredictions, which restart "
		"fetch at a new address.",
		"Code that must go through the legacy decoders: long instructions, "
		"length-changing prefixes, microcoded instructions.",
	},
	.hints = {
		"Split it into latency and bandwidth: `topdown collect --level 2 --process "
		"NAME`, then `topdown query --tree --run-id ID`.",
		"Find the code that starves the pipeline: `topdown collect --pid PID "
		"--sample=frontend_retired.latency_ge_16` (long bubbles) or "
		"`frontend_retired.latency_ge_2_bubbles_ge_1:pp` (short ones), then "
		"`topdown query --hot`.",
		"Shrink and order the hot path: profile-guided optimisation "
		"(-fprofile-generate/-fprofile-use), link-time function ordering, or a "
		"post-link optimiser such as BOLT.",
	},
},
{
	.vendor = INTEL, .name = "tma_bad_speculation",
	.title = "Bad Speculation",
	.description =
		"Share of issue slots spent on uops that were thrown away: work on a "
		"predicted path that turned out wrong, and slots lost while the core "
		"recovered from a branch misprediction or a machine clear.",
	.causes = {
		"Conditional branches that depend on unpredictable data (comparisons "
		"on random or hashed values, early-exit loops with varying trip counts).",
		"Indirect calls and jumps with many targets: virtual calls, function "
		"pointers, interpreter dispatch.",
		"Machine clears: memory-ordering conflicts with other cores writing "
		"the same lines, self-modifying or JIT-patched code.",
	},
	.hints = {
		"Separate mispredictions from machine clears with `topdown collect "
		"--level 2 --process NAME` (Branch_Mispredicts vs Machine_Clears).",
		"Find the mispredicted branches: `topdown collect --pid PID "
		"--sample=br_misp_retired.all_branches`, then `topdown query --hot` on the "
		"top symbols.",
		"Compare BR_MISP_RETIRED.ALL_BRANCHES with INST_RETIRED.ANY: fewer than "
		"about 200 instructions per misprediction is a lot.",
	},
},
{
	.vendor = INTEL, .name = "tma_backend_bound",
	.title = "Backend Bound",
	.description =
		"Share of issue slots left unused because the backend could not accept "
		"new uops: a structure it needs (load or store buffer, reservation "
		"station, reorder buffer, an execution port) was full, usually because "
		"earlier uops were waiting on data from memory or on slow execution "
		"units.",
	.causes = {
		"Loads that miss the caches or the data TLB, so uops pile up behind them.",
		"Long chains of dependent instructions, divides and square roots.",
		"More work for one kind of execution port than it can take per cycle.",
	},
	.hints = {
		"Split it into Memory_Bound and Core_Bound: `topdown collect --level 2 "
		"--process NAME`, then `topdown query --tree --run-id ID`.",
		"If memory dominates, sample the loads: `perf mem record -p PID` and "
		"`perf mem report --sort=mem,sym`.",
		"If the core dominates, look at the divider and port utilisation nodes "
		"at level 3 before changing code.",
	},
},
{
	.vendor = INTEL, .name = "tma_retiring",
	.title = "Retiring",
	.description =
		"Share of issue slots used by uops that eventually retired: useful work. "
		"A high value means the pipeline is busy, not that the program is fast; "
		"the remaining speed-up comes from doing less work or doing it with "
		"fewer, wider instructions.",
	.causes = {
		"Scalar code where vector instructions could process several elements "
		"per uop.",
		"Redundant work: recomputation, needless copies, an algorithm with too "
		"many operations.",
		"Instructions that expand into many uops or microcode (see "
		"Heavy_Operations).",
	},
	.hints = {
		"Check Heavy_Operations vs Light_Operations at level 2; heavy uops are "
		"often avoidable.",
		"Count vector work with the FP_ARITH_INST_RETIRED.* events (scalar vs "
		"128/256/512-bit) and check the compiler vectorised the hot loops "
		"(-O3 -march=native, -fopt-info-vec-missed).",
		"Profile where the retired work goes: `topdown collect --pid PID --sample=instructions`"
		" and look for algorithmic savings first.",
	},
},

/* ---------------------------------------------------------------- Intel, Frontend_Bound */
{
	.vendor = INTEL, .name = "tma_fetch_latency",
	.title = "Fetch Latency",
	.description =
		"Part of Frontend_Bound where the frontend delivered no uops at all for "
		"whole cycles, because fetch was waiting: on an instruction cache or "
		"ITLB miss, on a redirect after a branch, or on a switch between "
		"decoding paths.",
	.causes = {
		"Instruction cache and ITLB misses from a large or scattered code "
		"footprint.",
		"Resteers after mispredicted or unknown branches.",
		"Switches to the microcode sequencer and length-changing-prefix stalls.",
	},
	.hints = {
		"Go one level down: `topdown collect --level 3 --process NAME` shows "
		"ICache_Misses, ITLB_Misses, Branch_Resteers, MS_Switches, LCP and "
		"DSB_Switches.",
		"Sample where long fetch bubbles retire: `topdown collect --pid PID "
		"--sample=frontend_retired.latency_ge_16`.",
		"Code misses beyond L2 show with `topdown collect --pid PID "
		"--sample=frontend_retired.l2_miss`.",
	},
},
{
	.vendor = INTEL, .name = "tma_icache_misses",
	.title = "Instruction Cache Misses",
	.description =
		"Cycles the frontend was stalled because the next instructions were not "
		"in the L1 instruction cache and had to come from L2 or further away.",
	.causes = {
		"Hot code larger than the 32 KiB-class L1 instruction cache, or hot "
		"and cold code interleaved in the same cache lines.",
		"Calls spread over many functions and shared libraries (PLT stubs, "
		"deep call chains, heavy inlining that bloats callers).",
		"JIT-compiled code placed without regard to locality.",
	},
	.hints = {
		"Find the missing code: `topdown collect --pid PID --sample=frontend_retired.l1i_miss`"
		" (or frontend_retired.l2_miss:pp for misses that also miss L2).",
		"Group hot code: profile-guided optimisation with function reordering, "
		"hot/cold splitting (__attribute__((cold)), -freorder-blocks-and-partition) "
		"or BOLT.",
		"Build cold code for size (-Os on rarely used files) so the hot path "
		"shares fewer lines with it.",
	},
},
{
	.vendor = INTEL, .name = "tma_code_l2_hit",
	.ref_path = "Frontend_Bound.Fetch_Latency.ICache_Misses.Code_L2_Hit",
	.title = "Code Fetch L2 Hit",
	.description =
		"Part of ICache_Misses where the missing instruction line was found in "
		"the L2 cache: a short but frequent stall.",
	.causes = {
		"Hot code somewhat larger than the L1 instruction cache but well within L2.",
		"Hot loops calling helpers spread over many cache lines.",
	},
	.hints = {
		"Sample the fetches: `topdown collect --pid PID --sample=frontend_retired.l1i_miss` "
		"and look for hot functions that could be grouped together.",
		"Reorder functions by profile (PGO, BOLT's function reordering) so that "
		"caller and callee share lines.",
	},
},
{
	.vendor = INTEL, .name = "tma_code_l2_miss",
	.ref_path = "Frontend_Bound.Fetch_Latency.ICache_Misses.Code_L2_Miss",
	.title = "Code Fetch L2 Miss",
	.description =
		"Part of ICache_Misses where the missing instruction line was not in L2 "
		"either and came from L3 or memory: few but long stalls.",
	.causes = {
		"A very large code footprint (big server binaries, many libraries, JIT "
		"caches).",
		"Code evicted from L2 by data streaming through the same cache.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=frontend_retired.l2_miss`.",
		"Reduce and order the code footprint (PGO, BOLT, dropping unused "
		"features from hot builds); consider whether data streams could bypass "
		"the cache with non-temporal stores.",
	},
},
{
	.vendor = INTEL, .name = "tma_isb_full",
	.title = "Instruction Stream Buffer Full",
	.description =
		"Part of ICache_Misses where instruction-cache tag lookups were blocked "
		"because the buffer that tracks outstanding instruction-line fills was "
		"full or the line was still in flight.",
	.causes = {
		"Many instruction-cache misses in quick succession: code with poor "
		"locality jumping across many lines.",
	},
	.hints = {
		"Treat it like ICache_Misses: `topdown collect --pid PID "
		"--sample=frontend_retired.l1i_miss`, then group hot code with PGO or "
		"BOLT.",
	},
},
{
	.vendor = INTEL, .name = "tma_itlb_misses",
	.title = "ITLB Misses",
	.description =
		"Cycles the frontend was stalled translating code addresses: the "
		"instruction TLB missed and the translation came from the second-level "
		"TLB or from a page walk.",
	.causes = {
		"Hot code spread over more 4 KiB pages than the ITLB holds (large "
		"binaries, many shared libraries).",
		"JIT code scattered over many small mappings.",
	},
	.hints = {
		"Sample the misses: `topdown collect --pid PID --sample=frontend_retired.itlb_miss` "
		"(frontend_retired.stlb_miss:pp for those needing a walk).",
		"Back hot text with 2 MiB pages: remap .text onto huge pages at start-up, "
		"or use file-backed transparent huge pages where the kernel supports them.",
		"Compact the hot code so it spans fewer pages (PGO, BOLT, function "
		"reordering).",
	},
},
{
	.vendor = INTEL, .name = "tma_code_stlb_hit",
	.ref_path = "Frontend_Bound.Fetch_Latency.ITLB_Misses.Code_STLB_Hit",
	.title = "Code STLB Hit",
	.description =
		"Part of ITLB_Misses where the first-level ITLB missed but the "
		"second-level TLB (STLB) had the translation: a short stall per miss.",
	.causes = {
		"Hot code touching more pages than the small first-level ITLB covers.",
	},
	.hints = {
		"Compare ITLB_MISSES.STLB_HIT with ITLB_MISSES.WALK_COMPLETED to see "
		"which half dominates.",
		"Huge pages for hot text and a denser code layout cut both.",
	},
},
{
	.vendor = INTEL, .name = "tma_code_stlb_miss",
	.ref_path = "Frontend_Bound.Fetch_Latency.ITLB_Misses.Code_STLB_Miss",
	.title = "Code STLB Miss",
	.description =
		"Part of ITLB_Misses where the second-level TLB missed too and the "
		"hardware walked the page tables for a code address.",
	.causes = {
		"A code footprint spanning thousands of 4 KiB pages.",
		"Page-table entries for code evicted from the caches by data traffic, "
		"which makes each walk slow.",
	},
	.hints = {
		"Sample the walks: `topdown collect --pid PID --sample=frontend_retired.stlb_miss`; "
		"count them with ITLB_MISSES.WALK_COMPLETED.",
		"Map hot text with 2 MiB pages; this removes most code walks.",
	},
},
{
	.vendor = INTEL, .name = "tma_branch_resteers",
	.title = "Branch Resteers",
	.description =
		"Cycles the frontend spent refetching from a corrected address: after a "
		"mispredicted branch, after a machine clear, or when a branch the "
		"predictor did not know about was discovered at decode.",
	.causes = {
		"Mispredicted branches (the refetch cost comes on top of the wasted work "
		"counted in Bad_Speculation).",
		"Branches missing from the branch target buffer: very large or cold code.",
		"Machine clears, each of which restarts fetch.",
	},
	.hints = {
		"Level 4 splits it into Mispredicts_Resteers, Clears_Resteers and "
		"Unknown_Branches: `topdown collect --level 4 --process NAME`.",
		"For mispredictions: `topdown collect --pid PID --sample=br_misp_retired.all_branches`"
		". For unknown branches count BACLEARS.ANY.",
	},
},
{
	.vendor = INTEL, .name = "tma_mispredicts_resteers",
	.title = "Mispredicts Resteers",
	.description =
		"Part of Branch_Resteers caused by branch mispredictions detected at "
		"execution: the time to restart fetch on the right path.",
	.causes = {
		"The same hard-to-predict branches that drive Branch_Mispredicts.",
	},
	.hints = {
		"Fix the mispredictions themselves: `topdown collect --pid PID "
		"--sample=br_misp_retired.all_branches`, then make the hot branches "
		"predictable or branch-free (conditional moves, arithmetic masks, "
		"sorting the data first).",
	},
},
{
	.vendor = INTEL, .name = "tma_clears_resteers",
	.title = "Clears Resteers",
	.description =
		"Part of Branch_Resteers caused by machine clears: the time to restart "
		"fetch after the pipeline was flushed.",
	.causes = {
		"Memory-ordering clears from data shared with other cores.",
		"Self-modifying or cross-modifying code.",
	},
	.hints = {
		"See Machine_Clears: count MACHINE_CLEARS.MEMORY_ORDERING and "
		"MACHINE_CLEARS.SMC, and run `perf c2c record -p PID` when ordering "
		"clears dominate.",
	},
},
{
	.vendor = INTEL, .name = "tma_unknown_branches",
	.title = "Unknown Branches",
	.description =
		"Part of Branch_Resteers where the branch predictor had no entry for a "
		"branch, so the decoder found it late and fetch had to be redirected.",
	.causes = {
		"More taken branches in the hot code than the branch target buffer holds.",
		"Code executed for the first time or rarely: start-up, JIT tiers, large "
		"dispatch switches.",
	},
	.hints = {
		"Count BACLEARS.ANY; on newer cores sample with `topdown collect --pid PID "
		"--sample=frontend_retired.unknown_branch`.",
		"Reduce taken branches and code size in the hot path (PGO makes the "
		"common path fall through; BOLT does the same after linking).",
	},
},
{
	.vendor = INTEL, .name = "tma_ms_switches",
	.title = "Microcode Sequencer Switches",
	.description =
		"Cycles lost switching uop delivery to and from the microcode sequencer, "
		"which supplies the uops of complex instructions and of assists.",
	.causes = {
		"Microcoded instructions in hot code: CPUID, string instructions with a "
		"REP prefix on short strings, 64-bit divides on older cores.",
		"Assists, for example on denormal floating-point values.",
	},
	.hints = {
		"Count IDQ.MS_SWITCHES; on Alder Lake, Sapphire Rapids and newer sample "
		"with `topdown collect --pid PID --sample=frontend_retired.ms_flows`.",
		"Check the Assists node; flush denormals to zero (-ffast-math, or the "
		"FTZ/DAZ bits in MXCSR) if they are the source.",
	},
},
{
	.vendor = INTEL, .name = "tma_lcp",
	.title = "Length Changing Prefixes",
	.description =
		"Cycles the legacy decoder stalled on length-changing prefixes: an "
		"operand-size prefix that changes the length of an immediate, as in "
		"16-bit arithmetic with a 16-bit constant. Each one stops predecoding "
		"for a few cycles.",
	.causes = {
		"16-bit integer code with immediates (add ax, imm16; mov word ptr "
		"[mem], imm16), often from short fields or packed structs.",
		"Such code running from the legacy decoders because it misses the "
		"decoded-uop cache.",
	},
	.hints = {
		"Count DECODE.LCP and find the instructions with `topdown collect --pid PID "
		"--sample=decode.lcp` and `topdown query --hot` (the event skids a little).",
		"Widen the arithmetic to 32 bits, or load the constant into a register "
		"first; recent compilers do this when tuning for the target "
		"(-mtune=native).",
	},
},
{
	.vendor = INTEL, .name = "tma_dsb_switches",
	.title = "DSB Switches",
	.description =
		"Cycles lost when uop delivery switched from the decoded-uop cache (DSB) "
		"to the legacy decode pipeline (MITE) because the needed code was not in "
		"the DSB.",
	.causes = {
		"Hot code larger than the DSB or mapping to the same DSB sets.",
		"Code regions the DSB cannot hold, such as too many uops per 32- or "
		"64-byte window; on Skylake-family cores with the jump-conditional-code "
		"erratum fix, branches that cross or end on a 32-byte boundary.",
	},
	.hints = {
		"Sample DSB misses: `topdown collect --pid PID --sample=frontend_retired.dsb_miss`.",
		"Check how much is delivered from the DSB: IDQ.DSB_UOPS against "
		"IDQ.MITE_UOPS.",
		"On affected Skylake-family cores assemble with "
		"-Wa,-mbranches-within-32B-boundaries; everywhere, make the hot path "
		"smaller and contiguous.",
	},
},
{
	.vendor = INTEL, .name = "tma_fetch_bandwidth",
	.title = "Fetch Bandwidth",
	.description =
		"Part of Frontend_Bound where the frontend delivered some uops, but "
		"fewer per cycle than the backend could take, because of limits in the "
		"decoders, the decoded-uop cache or the loop stream detector.",
	.causes = {
		"Hot code running from the legacy decoders instead of the decoded-uop "
		"cache.",
		"Many taken branches, each of which ends a fetch block early.",
		"Instructions with many uops or long encodings.",
	},
	.hints = {
		"Go one level down (MITE, DSB, LSD, MS): `topdown collect --level 3 "
		"--process NAME`.",
		"Sample short bubbles: `topdown collect --pid PID "
		"--sample=frontend_retired.latency_ge_2_bubbles_ge_1`.",
		"Measure the share of uops from the DSB: IDQ.DSB_UOPS / (IDQ.DSB_UOPS + "
		"IDQ.MITE_UOPS + IDQ.MS_UOPS); below about 70% the legacy decoders are "
		"doing too much.",
	},
},
{
	.vendor = INTEL, .name = "tma_mite",
	.title = "MITE (Legacy Decode)",
	.description =
		"Cycles where uop delivery was limited by the legacy decode pipeline "
		"(MITE), which decodes fewer instructions per cycle than the decoded-uop "
		"cache delivers.",
	.causes = {
		"Code missing the decoded-uop cache (see DSB_Switches).",
		"Instructions only the first decoder handles (more than one uop), or "
		"long encodings that exhaust the 16-byte fetch window.",
	},
	.hints = {
		"Level 4 shows Decoder0_Alone and, on some cores, MITE_4wide.",
		"Raise decoded-uop cache coverage (smaller, contiguous hot code), and "
		"prefer short encodings in hot loops (avoid needless prefixes and "
		"32-bit displacements).",
	},
},
{
	.vendor = INTEL, .name = "tma_decoder0_alone",
	.ref_path = "Frontend_Bound.Fetch_Bandwidth.MITE.Decoder0_Alone",
	.title = "Decoder-0 Alone",
	.description =
		"Part of MITE where only the first legacy decoder was producing uops, "
		"typically because the instruction needs more than one uop and only "
		"that decoder can handle it.",
	.causes = {
		"Runs of multi-uop instructions (memory-destination arithmetic, some "
		"vector and string instructions) in code decoded by MITE.",
	},
	.hints = {
		"Look at the hot MITE-decoded code with `topdown query --hot`; split "
		"read-modify-write instructions into load, operate, store where the "
		"compiler allows, or get the loop into the decoded-uop cache.",
	},
},
{
	.vendor = INTEL, .name = "tma_mite_4wide",
	.ref_path = "Frontend_Bound.Fetch_Bandwidth.MITE.MITE_4wide",
	.title = "MITE 4-wide",
	.description =
		"Part of MITE: cycles in which the legacy decode pipeline delivered "
		"exactly four uops, fewer than these cores can issue per cycle, so code "
		"decoded by MITE runs below full width.",
	.causes = {
		"Hot code decoded by MITE rather than delivered from the decoded-uop cache.",
	},
	.hints = {
		"Improve decoded-uop cache coverage (see DSB_Switches): `topdown collect --pid PID "
		"--sample=frontend_retired.dsb_miss`.",
	},
},
{
	.vendor = INTEL, .name = "tma_dsb",
	.title = "DSB (Decoded Uop Cache) Bandwidth",
	.description =
		"Cycles where uop delivery was limited by the decoded-uop cache itself: "
		"the code was cached, but the cache could not supply a full issue group "
		"each cycle.",
	.causes = {
		"Taken branches close together: each one ends the delivery of the "
		"current cached block.",
		"Hot code spread so thinly that each fetch window holds few uops.",
	},
	.hints = {
		"Find taken branches in the hot loop with `perf record -b -p PID` and "
		"`perf report --sort symbol_from,symbol_to`.",
		"Let the common path fall through (PGO, BOLT) and unroll small loops so "
		"that fewer taken branches execute per uop.",
	},
},
{
	.vendor = INTEL, .name = "tma_lsd",
	.title = "LSD (Loop Stream Detector)",
	.description =
		"Cycles where uop delivery was limited by the loop stream detector, "
		"which replays small loops from the uop queue; loops whose uop count "
		"does not fill whole issue groups leave slots empty at the end of each "
		"iteration.",
	.causes = {
		"Tiny loops with a body of a few uops.",
	},
	.hints = {
		"Check how much comes from the LSD with LSD.UOPS and LSD.CYCLES_ACTIVE.",
		"Unroll the loop (e.g. -funroll-loops or a pragma) so that its body "
		"fills whole issue groups.",
	},
},
{
	.vendor = INTEL, .name = "tma_ms",
	.title = "Microcode Sequencer Bandwidth",
	.description =
		"Cycles where uop delivery was limited by the microcode sequencer, which "
		"produces the uops of complex instructions more slowly than the other "
		"paths.",
	.causes = {
		"Microcoded instructions or assists in hot code (see "
		"Microcode_Sequencer and Assists).",
	},
	.hints = {
		"Count IDQ.MS_UOPS; on newer cores `topdown collect --pid PID "
		"--sample=frontend_retired.ms_flows` shows which instructions enter "
		"microcode.",
	},
},

/* ---------------------------------------------------------------- Intel, Bad_Speculation */
{
	.vendor = INTEL, .name = "tma_branch_mispredicts",
	.title = "Branch Mispredicts",
	.description =
		"Part of Bad_Speculation caused by mispredicted branches: slots spent on "
		"the wrong path plus the recovery before the right path resumes.",
	.causes = {
		"Branches on data without a pattern: random comparisons, hash lookups, "
		"binary searches, sorting networks on unsorted input.",
		"Indirect calls with many targets (virtual dispatch, interpreters).",
		"Returns mispredicted after deep recursion or non-matching call/return "
		"pairs (longjmp, coroutine switches).",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=br_misp_retired.all_branches`, "
		"then `topdown query --hot`; `perf record -b` adds the branch history.",
		"Make the hot branch predictable or remove it: branch-free selection "
		"(conditional moves, masks), sorting or partitioning the data, "
		"splitting a loop by case.",
		"PGO (-fprofile-use) lets the compiler choose branch layout and "
		"if-conversion from real data.",
	},
},
{
	.vendor = INTEL, .name = "tma_cond_nt_mispredicts",
	.title = "Not-Taken Conditional Mispredicts",
	.description =
		"Part of Branch_Mispredicts from conditional branches that were not "
		"taken but were predicted taken.",
	.causes = {
		"Data-dependent if-statements whose condition is usually false but "
		"without a stable pattern.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.cond_ntaken` and "
		"consider branch-free code for the worst branch.",
	},
},
{
	.vendor = INTEL, .name = "tma_cond_tk_mispredicts",
	.title = "Taken Conditional Mispredicts",
	.description =
		"Part of Branch_Mispredicts from conditional branches that were taken "
		"but predicted not taken.",
	.causes = {
		"Data-dependent conditions, and loop exits whose trip count varies.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.cond_taken`; for "
		"loop exits, make trip counts regular (pad, peel, or batch the work).",
	},
},
{
	.vendor = INTEL, .name = "tma_cond_tk_bwd_mispredicts",
	.title = "Backward-Taken Conditional Mispredicts",
	.description =
		"Part of Branch_Mispredicts from taken backward conditional branches: "
		"mostly loop-closing branches predicted to exit when the loop went on.",
	.causes = {
		"Loops with short, varying trip counts.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.cond_taken_bwd`; "
		"unroll or restructure short loops so the back edge is predictable.",
	},
},
{
	.vendor = INTEL, .name = "tma_cond_tk_fwd_mispredicts",
	.title = "Forward-Taken Conditional Mispredicts",
	.description =
		"Part of Branch_Mispredicts from taken forward conditional branches: "
		"mostly if-statements that jumped over code the predictor expected to "
		"run.",
	.causes = {
		"Data-dependent if/else in hot code.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.cond_taken_fwd` "
		"and make the branch branch-free or predictable.",
	},
},
{
	.vendor = INTEL, .name = "tma_ind_call_mispredicts",
	.title = "Indirect Call Mispredicts",
	.description =
		"Part of Branch_Mispredicts from indirect calls: calls through function "
		"pointers or virtual tables whose target was predicted wrong.",
	.causes = {
		"Polymorphic call sites seeing many types in no fixed order.",
		"Callback tables and plugin dispatch.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.indirect_call`.",
		"Sort or batch objects by type so a call site sees one target for a "
		"while; devirtualise the common case (PGO does this with indirect-call "
		"promotion).",
	},
},
{
	.vendor = INTEL, .name = "tma_ind_jump_mispredicts",
	.title = "Indirect Jump Mispredicts",
	.description =
		"Part of Branch_Mispredicts from indirect jumps other than calls and "
		"returns, such as switch jump tables and interpreter dispatch.",
	.causes = {
		"Large switch statements on unpredictable values; bytecode interpreter "
		"loops with one central dispatch jump.",
	},
	.hints = {
		"Sample BR_MISP_RETIRED.INDIRECT with `topdown collect --pid PID "
		"--sample=br_misp_retired.indirect`.",
		"Replicate the dispatch at the end of each handler (threaded code) so "
		"each jump has its own history, or turn small switches into compare "
		"chains ordered by frequency.",
	},
},
{
	.vendor = INTEL, .name = "tma_ret_mispredicts",
	.title = "Return Mispredicts",
	.description =
		"Part of Branch_Mispredicts from return instructions whose target did "
		"not match the return stack predictor.",
	.causes = {
		"Recursion deeper than the return stack buffer.",
		"Calls and returns that do not pair up: longjmp, exceptions, coroutine "
		"and fiber switches, hand-written stack tricks.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_misp_retired.ret`.",
		"Turn deep recursion into iteration; keep context switches out of the "
		"hottest loops.",
	},
},
{
	.vendor = INTEL, .name = "tma_other_mispredicts",
	.title = "Other Mispredicts",
	.description =
		"Part of Branch_Mispredicts whose recovery cannot be tied to a retired "
		"x86 branch: mispredictions on paths that were later discarded, and "
		"other kinds of misprediction.",
	.causes = {
		"Nested mispredictions, where a branch on an already wrong path is "
		"itself mispredicted.",
	},
	.hints = {
		"Usually small; when it is not, fix the retired mispredictions first "
		"(br_misp_retired.all_branches) and compare INT_MISC.CLEARS_COUNT with "
		"BR_MISP_RETIRED.ALL_BRANCHES plus MACHINE_CLEARS.COUNT.",
	},
},
{
	.vendor = INTEL, .name = "tma_machine_clears",
	.title = "Machine Clears",
	.description =
		"Part of Bad_Speculation caused by machine clears: the core flushed the "
		"pipeline for a reason other than a branch, discarding work in flight "
		"and refetching.",
	.causes = {
		"Memory-ordering conflicts: another core wrote a line that a load had "
		"already read speculatively (true or false sharing, spin locks).",
		"Self-modifying or cross-modifying code: JIT compilers patching code "
		"near code being executed.",
		"Some microcode assists.",
	},
	.hints = {
		"Count MACHINE_CLEARS.MEMORY_ORDERING and MACHINE_CLEARS.SMC to see "
		"which kind dominates.",
		"For ordering clears find the shared lines with `perf c2c record -p PID` "
		"and `perf c2c report`; separate data written by different threads "
		"into different cache lines.",
		"For code modification, keep writable data and generated code in "
		"separate pages.",
	},
},
{
	.vendor = INTEL, .name = "tma_other_nukes",
	.title = "Other Nukes",
	.description =
		"Part of Machine_Clears not caused by memory ordering: mainly "
		"self-modifying or cross-modifying code, plus rarer clears the core "
		"takes for other internal reasons.",
	.causes = {
		"Writes to memory near code that is executing (JIT patching, "
		"trampolines, data placed in text pages).",
	},
	.hints = {
		"Count MACHINE_CLEARS.SMC; if it explains the node, keep generated "
		"code and data in separate pages and batch code patching.",
	},
},

/* ---------------------------------------------------------------- Intel, Backend_Bound */
{
	.vendor = INTEL, .name = "tma_memory_bound",
	.title = "Memory Bound",
	.description =
		"Part of Backend_Bound where the pipeline was stalled on the memory "
		"subsystem: loads still waiting for data, or a store buffer too full to "
		"take more stores.",
	.causes = {
		"A working set larger than the caches, or an access pattern that the "
		"prefetchers cannot follow (pointer chasing, random indexing).",
		"Data TLB misses from large, sparse data.",
		"Cache lines bouncing between cores that write them.",
	},
	.hints = {
		"Find the level that hurts: `topdown collect --level 3 --process NAME` "
		"shows L1/L2/L3/DRAM/Store_Bound.",
		"Sample loads with their latency and data source: `perf mem record -p "
		"PID`, `perf mem report --sort=mem,sym,dso`.",
		"Check L1, L2 and L3 misses per thousand instructions (the Info metrics) "
		"to see how far the misses go.",
	},
},
{
	.vendor = INTEL, .name = "tma_l1_bound",
	.title = "L1 Bound",
	.description =
		"Cycles stalled on loads that did not miss the L1 data cache: the data "
		"was close, but the load was slow or blocked anyway (a dependency on L1 "
		"latency, a DTLB miss, a blocked store forward, a lock, a split line).",
	.causes = {
		"Pointer chasing through data that fits in L1, so every step waits the "
		"full L1 latency.",
		"Loads that read data just stored with a different size, or that "
		"cross a cache line.",
		"Data TLB misses and locked instructions.",
	},
	.hints = {
		"Level 4 separates DTLB_Load, Store_Fwd_Blk, Lock_Latency, Split_Loads, "
		"4K_Aliasing and FB_Full: `topdown collect --level 4 --process NAME`.",
		"Sample loads that hit L1 but stall: `topdown collect --pid PID "
		"--sample=mem_load_retired.l1_hit` and `topdown query --hot`.",
	},
},
{
	.vendor = INTEL, .name = "tma_dtlb_load",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.DTLB_Load",
	.title = "DTLB Load Misses",
	.description =
		"Cycles spent translating load addresses: the first-level data TLB "
		"missed and the translation came from the second-level TLB or a page "
		"walk.",
	.causes = {
		"Large data touched sparsely: hash tables, graphs, big heaps in 4 KiB "
		"pages.",
		"Many threads or processes with distinct data competing for the TLB.",
	},
	.hints = {
		"Sample the loads: `topdown collect --pid PID --sample=mem_inst_retired.stlb_miss_loads`"
		"; count walks with DTLB_LOAD_MISSES.WALK_COMPLETED.",
		"Use huge pages: transparent huge pages (madvise(MADV_HUGEPAGE) on the "
		"big allocations, or 'always' in /sys/kernel/mm/transparent_hugepage/"
		"enabled), or hugetlbfs.",
		"Improve locality: pack hot fields together, allocate related objects "
		"from the same arena.",
	},
},
{
	.vendor = INTEL, .name = "tma_store_fwd_blk",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.Store_Fwd_Blk",
	.title = "Store Forwarding Blocked",
	.description =
		"Cycles lost to loads that overlapped an earlier, still-buffered store "
		"but could not take their data from it (different size or alignment), "
		"so they waited until the store was written to the cache.",
	.causes = {
		"Writing a value in narrow pieces and reading it back as a wider one "
		"(two 32-bit stores, one 64-bit load), or the reverse with an offset.",
		"Type punning through memory, unions, small structs passed through the "
		"stack and read back whole.",
	},
	.hints = {
		"Count LD_BLOCKS.STORE_FORWARD and find the code with `topdown collect --pid PID "
		"--sample=ld_blocks.store_forward` and `topdown query --hot` (not precise: look "
		"just before the reported instruction).",
		"Store and load with the same size and address, or keep the value in a "
		"register.",
	},
},
{
	.vendor = INTEL, .name = "tma_l1_latency_dependency",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.L1_Latency_Dependency",
	.title = "L1 Latency Dependency",
	.description =
		"Estimated cycles where loads that hit the L1 data cache were on the "
		"critical path, so the program waited for the L1 latency again and "
		"again.",
	.causes = {
		"Linked lists, trees and other pointer chains walked one node at a time.",
		"Values spilled to the stack and reloaded in a loop-carried dependency.",
	},
	.hints = {
		"Sample L1 hits on the critical path: `topdown collect --pid PID "
		"--sample=mem_load_retired.l1_hit`.",
		"Break the chain: keep values in registers (fewer live variables, "
		"restrict pointers so the compiler need not reload), walk several "
		"independent chains at once.",
	},
},
{
	.vendor = INTEL, .name = "tma_l1_latency_capacity",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.L1_Latency_Capacity",
	.title = "L1 Latency Capacity",
	.description =
		"Estimated cycles where demand loads missed the small first-level (L0) "
		"data cache of these cores and were served from the larger L1 behind it, "
		"at a higher latency.",
	.causes = {
		"Hot data a little larger than the first-level data cache.",
	},
	.hints = {
		"Block loops so that the hot data fits the first-level data cache, and "
		"pack the fields used together.",
		"Sample with `topdown collect --pid PID --sample=mem_load_retired.l1_hit_l1` where "
		"the event exists.",
	},
},
{
	.vendor = INTEL, .name = "tma_lock_latency",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.Lock_Latency",
	.title = "Lock Latency",
	.description =
		"Cycles spent in locked instructions (atomic read-modify-write, "
		"xchg with memory, lock-prefixed operations), including the cache misses "
		"they take while holding the line.",
	.causes = {
		"Contended atomic counters, reference counts and locks shared by "
		"threads on different cores.",
		"Atomics in the hot loop where plain operations would do.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_inst_retired.lock_loads`.",
		"Find contended lines with `perf c2c record -p PID` and `perf c2c report`.",
		"Use per-thread counters merged later, batch updates, or lock-free "
		"structures with less sharing.",
	},
},
{
	.vendor = INTEL, .name = "tma_split_loads",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.Split_Loads",
	.title = "Split Loads",
	.description =
		"Cycles handling loads that cross a 64-byte cache-line boundary and so "
		"need two cache accesses.",
	.causes = {
		"Misaligned data: packed structs, unaligned buffers, wide vector loads "
		"at arbitrary offsets.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_inst_retired.split_loads`.",
		"Align hot data and buffers (alignas(64), posix_memalign) and pad "
		"structs; for vector loops, peel until the address is aligned.",
	},
},
{
	.vendor = INTEL, .name = "tma_4k_aliasing",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.4K_Aliasing",
	.title = "4K Aliasing",
	.description =
		"Cycles lost when a load was falsely treated as depending on an earlier "
		"store whose address matched in the low 12 bits (a multiple of 4 KiB "
		"apart), and was held until the conflict resolved.",
	.causes = {
		"Reading one buffer while writing another at the same offset within "
		"4 KiB pages, e.g. two page-aligned arrays processed in lockstep.",
	},
	.hints = {
		"Count LD_BLOCKS_PARTIAL.ADDRESS_ALIAS.",
		"Offset one of the buffers by a few cache lines (64-256 bytes) so that "
		"the low address bits differ.",
	},
},
{
	.vendor = INTEL, .name = "tma_fb_full",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.FB_Full",
	.title = "Fill Buffer Full",
	.description =
		"Cycles where every L1D fill buffer was busy, so further L1 misses could "
		"not even start: the core has reached its limit of misses in flight.",
	.causes = {
		"Streaming through memory faster than data arrives (bandwidth-bound "
		"loops).",
		"Aggressive software prefetching, which also occupies fill buffers.",
	},
	.hints = {
		"Count L1D_PEND_MISS.FB_FULL and check Mem_Bandwidth.",
		"Reduce traffic per element (smaller types, fewer passes over the data, "
		"cache blocking); use non-temporal stores for large output that is not "
		"read back soon.",
	},
},
{
	.vendor = INTEL, .name = "tma_store_early_blk",
	.ref_path = "Backend_Bound.Memory_Bound.L1_Bound.Store_Early_Blk",
	.title = "Store Early Block",
	.description =
		"Estimated cycles where loads were held because an older store's address "
		"or data was not known yet, so the core could not tell whether the load "
		"depended on it.",
	.causes = {
		"Stores whose address comes from a slow computation or a load that "
		"missed, followed closely by loads.",
	},
	.hints = {
		"Count LD_BLOCKS.STORE_EARLY; compute store addresses early, and avoid "
		"storing through pointers that were just loaded when a register "
		"would do.",
	},
},
{
	.vendor = INTEL, .name = "tma_l2_bound",
	.title = "L2 Bound",
	.description =
		"Cycles stalled on loads that missed the L1 data cache and hit in L2.",
	.causes = {
		"A working set larger than L1 but within L2, walked without blocking.",
		"Strided or random accesses the L1 prefetchers do not cover.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_load_retired.l2_hit`.",
		"Block (tile) loops for the L1 size, shrink the hot structures, or "
		"software-prefetch a few iterations ahead (__builtin_prefetch).",
	},
},
{
	.vendor = INTEL, .name = "tma_l2_hit_latency",
	.ref_path = "Backend_Bound.Memory_Bound.L2_Bound.L2_Hit_Latency",
	.title = "L2 Hit Latency",
	.description =
		"Estimated cycles with loads that hit L2 under low load: the latency of "
		"L2 itself is on the critical path.",
	.causes = {
		"Dependent loads into an L2-sized structure (a tree or hash table that "
		"does not fit L1).",
	},
	.hints = {
		"Overlap the misses: issue independent lookups together, prefetch the "
		"next node early, or change the layout (e.g. B-tree-like nodes instead "
		"of binary ones).",
	},
},
{
	.vendor = INTEL, .name = "tma_l3_bound",
	.title = "L3 Bound",
	.description =
		"Cycles stalled on loads that missed L2 and were served by the shared L3 "
		"cache, or that waited on a line held by another core.",
	.causes = {
		"A working set larger than L2 but within L3.",
		"Data shared between cores, especially data one of them writes.",
		"A full super queue when many misses are in flight.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_load_retired.l3_hit`.",
		"Check Contested_Accesses and Data_Sharing at level 4; for sharing "
		"problems use `perf c2c record -p PID`.",
		"Tile for the L2 size and shrink hot data.",
	},
},
{
	.vendor = INTEL, .name = "tma_contested_accesses",
	.ref_path = "Backend_Bound.Memory_Bound.L3_Bound.Contested_Accesses",
	.title = "Contested Accesses",
	.description =
		"Cycles where loads found their line modified in another core's private "
		"cache, so the data had to be snooped out of that core: synchronisation "
		"cost from data written by one thread and read by another.",
	.causes = {
		"True sharing: producer/consumer queues, locks, shared counters.",
		"False sharing: independent variables written by different threads that "
		"sit in the same cache line.",
	},
	.hints = {
		"Find the lines: `perf c2c record -p PID`, then `perf c2c report` and "
		"look at the HITM columns.",
		"Give each thread's written data its own cache line (alignas(64), or "
		"128 bytes where the adjacent-line prefetcher pairs lines); batch "
		"updates to shared data.",
	},
},
{
	.vendor = INTEL, .name = "tma_data_sharing",
	.ref_path = "Backend_Bound.Memory_Bound.L3_Bound.Data_Sharing",
	.title = "Data Sharing",
	.description =
		"Cycles where loads hit L3 but the line was also present, unmodified, in "
		"another core's cache, which costs a snoop: read sharing between cores.",
	.causes = {
		"Read-mostly data used by threads on several cores, handed over "
		"frequently.",
	},
	.hints = {
		"Usually acceptable; if large, check with `perf c2c record -p PID` and "
		"keep threads that share data close together: SMT siblings of one core, "
		"or cores of one L3 (taskset, cgroup cpusets).",
	},
},
{
	.vendor = INTEL, .name = "tma_l3_hit_latency",
	.ref_path = "Backend_Bound.Memory_Bound.L3_Bound.L3_Hit_Latency",
	.title = "L3 Hit Latency",
	.description =
		"Estimated cycles with loads that hit L3 under low load: the L3 latency "
		"itself is on the critical path.",
	.causes = {
		"Dependent lookups into structures larger than L2.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=mem_load_retired.l3_hit`; "
		"prefetch ahead, batch independent lookups, or shrink the structure to "
		"fit L2.",
	},
},
{
	.vendor = INTEL, .name = "tma_sq_full",
	.ref_path = "Backend_Bound.Memory_Bound.L3_Bound.SQ_Full",
	.title = "Super Queue Full",
	.description =
		"Cycles where the queue of requests from the core to the uncore (L3 and "
		"memory) was full, counting both hardware threads of the core: the core "
		"cannot issue more misses.",
	.causes = {
		"Bandwidth-heavy streams, from one thread or from both SMT siblings.",
		"Hardware prefetchers adding requests on top of demand misses.",
	},
	.hints = {
		"Check Mem_Bandwidth; if the SMT sibling is the other source, compare "
		"runs with the sibling idle.",
		"Reduce the bytes moved per unit of work (smaller types, blocking, "
		"fewer passes).",
	},
},
{
	.vendor = INTEL, .name = "tma_l3_miss_bound",
	.aliases = { "tma_dram_bound" },
	.title = "DRAM Bound (L3 Miss Bound)",
	.description =
		"Cycles stalled on loads that missed the last-level cache and went to "
		"memory: local or remote DRAM, or another socket's caches. TMA 5 calls "
		"this node L3_Miss_Bound; earlier versions DRAM_Bound.",
	.causes = {
		"A working set much larger than the L3 cache, walked with poor locality.",
		"Pointer-heavy data structures that defeat the prefetchers.",
		"Memory allocated on another NUMA node than the thread runs on.",
	},
	.hints = {
		"Level 4 tells bandwidth from latency (Mem_Bandwidth, Mem_Latency): "
		"`topdown collect --level 4 --process NAME`.",
		"Sample the misses: `topdown collect --pid PID --sample=mem_load_retired.l3_miss`, "
		"or `perf mem record -p PID` for the data addresses.",
		"Check NUMA placement with `numastat -p PID`; bind with `numactl "
		"--cpunodebind=N --membind=N` to test.",
	},
},
{
	.vendor = INTEL, .name = "tma_mem_bandwidth",
	.ref_path = "Backend_Bound.Memory_Bound.DRAM_Bound.MEM_Bandwidth",
	.title = "Memory Bandwidth",
	.description =
		"Cycles where many data reads were outstanding to memory at once: the "
		"thread is probably near the bandwidth limit of DRAM (or of the memory "
		"channels it shares with other cores).",
	.causes = {
		"Streaming over large arrays with little reuse.",
		"Many threads on one socket streaming at once.",
		"Write-allocate traffic: every store to an uncached line first reads it.",
	},
	.hints = {
		"Measure the socket's DRAM traffic with the uncore memory counters "
		"(`perf stat -M tma_info_system_dram_bw_use -a` where the metric exists).",
		"Move fewer bytes: smaller element types, compression, blocking for "
		"reuse in cache, fusing passes over the same data.",
		"Use non-temporal stores for big write-only output, and spread memory "
		"over the sockets' nodes when threads span them.",
	},
},
{
	.vendor = INTEL, .name = "tma_mem_latency",
	.ref_path = "Backend_Bound.Memory_Bound.DRAM_Bound.MEM_Latency",
	.title = "Memory Latency",
	.description =
		"Cycles with reads outstanding to memory but too few to be bandwidth "
		"bound: the thread waits for the latency of individual DRAM accesses.",
	.causes = {
		"Dependent loads that miss the caches: linked structures, hash chains, "
		"tree searches over big data.",
		"Remote NUMA memory, which adds latency to every miss.",
		"TLB walks that themselves miss the caches.",
	},
	.hints = {
		"Sample high-latency loads: `perf mem record -p PID` (it uses "
		"MEM_TRANS_RETIRED.LOAD_LATENCY_*), then `perf mem report --sort=sym,mem`.",
		"Overlap misses: batch independent lookups, prefetch the next "
		"elements, interleave several traversals.",
		"Keep memory local to the thread's node (numactl, first-touch "
		"initialisation by the thread that uses the data) and use huge pages.",
	},
},
{
	.vendor = INTEL, .name = "tma_uc_bound",
	.title = "Uncacheable Memory Bound",
	.description =
		"Estimated cycles lost to loads from uncacheable memory, which always go "
		"to the device or memory controller and are never cached.",
	.causes = {
		"Reading device registers or device memory mapped into the process "
		"(MMIO), or memory mapped uncached.",
	},
	.hints = {
		"Count MEM_LOAD_MISC_RETIRED.UC; read MMIO less often (batch status "
		"polls, let the device write results to normal memory by DMA).",
	},
},
{
	.vendor = INTEL, .name = "tma_cxl_mem_bound",
	.title = "CXL / Far Memory Bound",
	.description =
		"Estimated cycles stalled on loads served by a slower, far memory tier: "
		"CXL-attached memory, or persistent memory modules on the server "
		"generations that support them.",
	.causes = {
		"Hot data placed on the far tier by the allocator or the kernel's "
		"memory tiering.",
	},
	.hints = {
		"Check where the pages live with `numastat -p PID` (far memory appears as "
		"its own NUMA node); bind hot data to DRAM nodes with `numactl "
		"--membind` or enable the kernel's tier promotion of hot pages.",
	},
},
{
	.vendor = INTEL, .name = "tma_store_bound",
	.title = "Store Bound",
	.description =
		"Cycles stalled because the store buffer was full: stores could not "
		"retire into the cache fast enough, usually because they missed L1 and "
		"had to fetch the line first.",
	.causes = {
		"Stores to lines not in cache (large output arrays, memset/memcpy of "
		"big buffers).",
		"False sharing: threads writing different data in the same line.",
		"Split stores and store DTLB misses.",
	},
	.hints = {
		"Level 4 separates Store_Latency, False_Sharing, Split_Stores, "
		"Streaming_Stores and DTLB_Store.",
		"Sample stores: `topdown collect --pid PID --sample=mem_inst_retired.all_stores`; "
		"for sharing, `perf c2c record -p PID`.",
	},
},
{
	.vendor = INTEL, .name = "tma_store_latency",
	.ref_path = "Backend_Bound.Memory_Bound.Store_Bound.Store_Latency",
	.title = "Store Latency",
	.description =
		"Estimated cycles spent on stores that missed the L1 data cache: each "
		"must obtain the line for writing (read-for-ownership) before it can "
		"complete.",
	.causes = {
		"Writing large buffers that are not in cache.",
		"Scattered stores over a large area.",
	},
	.hints = {
		"Sample stores with `perf mem record -p PID` (stores included by default).",
		"For large write-only output use non-temporal stores; otherwise write "
		"data while it is still cached and group stores by cache line.",
	},
},
{
	.vendor = INTEL, .name = "tma_false_sharing",
	.ref_path = "Backend_Bound.Memory_Bound.Store_Bound.False_Sharing",
	.title = "False Sharing",
	.description =
		"Estimated cycles spent on stores whose line was modified in another "
		"core's cache: threads take turns owning the line.",
	.causes = {
		"Per-thread counters or flags packed next to each other.",
		"A lock and the data it protects sharing a line with other hot data.",
	},
	.hints = {
		"Find the lines and the offsets each thread writes: `perf c2c record -p "
		"PID`, then `perf c2c report`.",
		"Pad or align per-thread data to its own cache line (64 bytes, 128 with "
		"the adjacent-line prefetcher); keep read-mostly fields away from "
		"written ones.",
	},
},
{
	.vendor = INTEL, .name = "tma_split_stores",
	.ref_path = "Backend_Bound.Memory_Bound.Store_Bound.Split_Stores",
	.title = "Split Stores",
	.description =
		"Rate of stores that cross a 64-byte cache-line boundary and so touch "
		"two lines.",
	.causes = {
		"Misaligned buffers and packed structures; wide vector stores at "
		"arbitrary offsets.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_inst_retired.split_stores`; "
		"align the destination or peel a loop prologue until it is aligned.",
	},
},
{
	.vendor = INTEL, .name = "tma_streaming_stores",
	.ref_path = "Backend_Bound.Memory_Bound.Store_Bound.Streaming_Stores",
	.title = "Streaming Stores",
	.description =
		"Estimated cycles spent on non-temporal (streaming) stores, which bypass "
		"the caches and write straight towards memory.",
	.causes = {
		"Large memcpy/memmove calls: glibc switches to non-temporal stores above "
		"a size threshold.",
		"Explicit streaming stores on data that is read again soon.",
	},
	.hints = {
		"Count OCR.STREAMING_WR.ANY_RESPONSE. If the data is reused soon, use "
		"normal stores (for glibc raise GLIBC_TUNABLES="
		"glibc.cpu.x86_non_temporal_threshold); otherwise write whole cache "
		"lines per streaming burst.",
	},
},
{
	.vendor = INTEL, .name = "tma_dtlb_store",
	.ref_path = "Backend_Bound.Memory_Bound.Store_Bound.DTLB_Store",
	.title = "DTLB Store Misses",
	.description =
		"Estimated cycles spent translating store addresses that missed the "
		"first-level data TLB.",
	.causes = {
		"Stores scattered over a large address range in 4 KiB pages.",
	},
	.hints = {
		"Sample them: `topdown collect --pid PID --sample=mem_inst_retired.stlb_miss_stores`"
		"; use huge pages for the written data and improve locality.",
	},
},
{
	.vendor = INTEL, .name = "tma_core_bound",
	.title = "Core Bound",
	.description =
		"Part of Backend_Bound not explained by memory: execution resources "
		"or dependencies between instructions limited progress. On hybrid "
		"E-cores (cpu_atom) the node instead counts slots lost to allocation "
		"restrictions.",
	.causes = {
		"Long dependency chains (each instruction waits for the previous one).",
		"Divides and square roots, which occupy a slow unit.",
		"More uops for one kind of port than it can execute per cycle.",
		"Serializing instructions and spin-wait loops with PAUSE.",
	},
	.hints = {
		"Go one level down (Divider, Ports_Utilization, Serializing_Operation): "
		"`topdown collect --level 3 --process NAME`.",
		"Find the hot instructions with `topdown collect --pid PID --sample` and "
		"`topdown query --hot`; look for long chains of dependent arithmetic.",
		"Break chains with independent accumulators and unrolling; let the "
		"compiler vectorise (-O3 -march=native).",
	},
},
{
	.vendor = INTEL, .name = "tma_divider",
	.title = "Divider",
	.description =
		"Cycles the divide unit was busy. Integer and floating-point division "
		"and square root take many cycles and are only partly pipelined.",
	.causes = {
		"Division or modulo by a value only known at run time, in a loop.",
		"64-bit integer division, which is especially slow on older cores.",
		"Floating-point division and square root in hot loops.",
	},
	.hints = {
		"Sample the divides: `topdown collect --pid PID --sample=arith.divider_active` (on "
		"newer cores arith.div_active), then `topdown query --hot`.",
		"Hoist divisions out of loops, multiply by a precomputed reciprocal, "
		"replace divisions by powers of two with shifts, use 32-bit divides "
		"where the range allows.",
	},
},
{
	.vendor = INTEL, .name = "tma_fp_divider",
	.ref_path = "Backend_Bound.Core_Bound.Divider.FP_Divider",
	.title = "FP Divider",
	.description =
		"Part of Divider spent on floating-point division and square root.",
	.causes = {
		"divss/divsd/sqrtsd (or their vector forms) in hot loops, e.g. "
		"normalisation and distance computations.",
	},
	.hints = {
		"Count ARITH.FP_DIVIDER_ACTIVE; multiply by a reciprocal computed once, "
		"or use reciprocal approximations refined by a Newton step where the "
		"precision allows.",
	},
},
{
	.vendor = INTEL, .name = "tma_int_divider",
	.ref_path = "Backend_Bound.Core_Bound.Divider.INT_Divider",
	.title = "Integer Divider",
	.description =
		"Part of Divider spent on integer division and modulo.",
	.causes = {
		"Modulo for hashing or ring indexing, division by run-time values.",
	},
	.hints = {
		"Use power-of-two table sizes with masks, precomputed multiplicative "
		"inverses for run-time-constant divisors, and 32-bit operands where "
		"possible.",
	},
},
{
	.vendor = INTEL, .name = "tma_serializing_operation",
	.title = "Serializing Operations",
	.description =
		"Cycles the issue pipeline was held by instructions that must wait for "
		"all earlier work to finish (or that stall issue by design), such as "
		"PAUSE, LFENCE, CPUID and the user-level wait instructions.",
	.causes = {
		"Spin-wait loops using PAUSE.",
		"Speculation barriers (LFENCE) and timing code (LFENCE; RDTSC).",
		"CPUID or other serializing instructions called in a hot path.",
	},
	.hints = {
		"Level 4 separates Slow_Pause, Memory_Fence and the C0.1/C0.2 waits.",
		"Find them with `topdown collect --pid PID --sample` and `topdown query --hot`; "
		"look for pause, lfence, cpuid near the hottest samples.",
	},
},
{
	.vendor = INTEL, .name = "tma_slow_pause",
	.ref_path = "Backend_Bound.Core_Bound.Serializing_Operation.Slow_Pause",
	.title = "Slow PAUSE",
	.description =
		"Cycles spent executing PAUSE, the spin-loop hint. PAUSE takes far longer "
		"on Skylake-generation and later cores than on earlier ones, so spin "
		"loops tuned for old hardware now wait much longer per iteration.",
	.causes = {
		"Spin locks and busy-wait loops: runtime thread pools (OpenMP, Java, "
		".NET), adaptive mutexes, user-space polling.",
	},
	.hints = {
		"On Sapphire Rapids and newer count CPU_CLK_UNHALTED.PAUSE; on Ice Lake "
		"MISC_RETIRED.PAUSE_INST.",
		"Spin less and block sooner (futex-based waiting), or tune the runtime "
		"(e.g. OMP_WAIT_POLICY=passive, GOMP_SPINCOUNT).",
	},
},
{
	.vendor = INTEL, .name = "tma_memory_fence",
	.ref_path = "Backend_Bound.Core_Bound.Serializing_Operation.Memory_Fence",
	.title = "Memory Fence (LFENCE)",
	.description =
		"Cycles stalled on LFENCE instructions, which hold later instructions "
		"until all earlier ones complete.",
	.causes = {
		"LFENCE used as a speculation barrier, by hand or by compiler hardening "
		"options.",
		"LFENCE around RDTSC in timing code run very often.",
	},
	.hints = {
		"Find them: `topdown collect --pid PID --sample=misc2_retired.lfence` and "
		"`topdown query --hot`; remove fences from paths that do not need them, or time "
		"less often.",
	},
},
{
	.vendor = INTEL, .name = "tma_c01_wait",
	.ref_path = "Backend_Bound.Core_Bound.Serializing_Operation.C01_Wait",
	.title = "C0.1 Wait",
	.description =
		"Cycles the thread spent in the C0.1 light-sleep state, entered with "
		"the TPAUSE or UMWAIT instructions; quick to wake, small power saving.",
	.causes = {
		"Spin-wait code that waits with TPAUSE/UMWAIT instead of PAUSE "
		"(some runtimes and polling-mode drivers).",
	},
	.hints = {
		"This is waiting, not work: reduce the need to wait (better work "
		"distribution, fewer hand-offs). The kernel caps the wait time in "
		"/sys/devices/system/cpu/umwait_control/max_time.",
	},
},
{
	.vendor = INTEL, .name = "tma_c02_wait",
	.title = "C0.2 Wait",
	.description =
		"Cycles the thread spent in the C0.2 light-sleep state, entered with "
		"TPAUSE or UMWAIT; slower to wake than C0.1, larger power saving.",
	.causes = {
		"Spin-wait code that waits with TPAUSE/UMWAIT.",
	},
	.hints = {
		"Reduce waiting as for C01_Wait; if wake-up latency matters more than "
		"power, disable C0.2 with /sys/devices/system/cpu/umwait_control/"
		"enable_c02.",
	},
},
{
	.vendor = INTEL, .name = "tma_ports_utilization",
	.title = "Ports Utilization",
	.description =
		"Cycles where the core was limited by how many uops it executed per "
		"cycle, for reasons other than the divider: too few ready uops (a "
		"dependency-bound program) or too many uops for the same ports.",
	.causes = {
		"Little instruction-level parallelism: each instruction needs the "
		"previous one's result.",
		"Heavy use of one port class (shuffles, vector multiplies, loads).",
	},
	.hints = {
		"Level 4 splits cycles by how many uops executed (0, 1, 2, 3 or more).",
		"Count per-port dispatch (UOPS_DISPATCHED.PORT_* on Ice Lake and later, "
		"UOPS_DISPATCHED_PORT.PORT_* on Skylake) to find a saturated port.",
	},
},
{
	.vendor = INTEL, .name = "tma_ports_utilized_0",
	.title = "No Ports Utilized",
	.description =
		"Cycles where no uop executed on any port although no load was "
		"outstanding: everything in the scheduler was waiting for a "
		"long-latency non-memory result.",
	.causes = {
		"Long-latency instructions on the critical path (divides, some vector "
		"instructions, transitions between SSE and AVX code).",
		"Serializing instructions draining the pipeline.",
	},
	.hints = {
		"Find the waiting code with `topdown collect --pid PID --sample`; check "
		"for SSE/AVX mixing (use vzeroupper, build everything with the same "
		"-m options).",
	},
},
{
	.vendor = INTEL, .name = "tma_ports_utilized_1",
	.title = "One Port Utilized",
	.description =
		"Cycles where exactly one uop executed: the program offered almost no "
		"parallelism, typically one long dependency chain.",
	.causes = {
		"A loop-carried dependency (a running sum, a hash update, a pointer "
		"chase hitting L1).",
	},
	.hints = {
		"Split the chain: several accumulators combined at the end, unrolling "
		"with independent iterations, or vectorisation.",
	},
},
{
	.vendor = INTEL, .name = "tma_ports_utilized_2",
	.title = "Two Ports Utilized",
	.description =
		"Cycles where exactly two uops executed: better than one, but still well "
		"below what the core can sustain.",
	.causes = {
		"Moderate dependency chains; short loops the compiler did not unroll.",
	},
	.hints = {
		"Same remedies as One_Port_Utilized: more independent work per "
		"iteration, unrolling, vectorisation.",
	},
},
{
	.vendor = INTEL, .name = "tma_ports_utilized_3m",
	.ref_path = "Backend_Bound.Core_Bound.Ports_Utilization.Ports_Utilized_3m",
	.title = "Three or More Ports Utilized",
	.description =
		"Cycles where three or more uops executed: the core runs near its "
		"execution width, so the limit is the amount of work, or one "
		"oversubscribed port class.",
	.causes = {
		"Much scalar work that could be vectorised.",
		"Many uops for one port class (loads, stores, shuffles, branches).",
	},
	.hints = {
		"Count per-port dispatch (UOPS_DISPATCHED.PORT_*) to find the busy "
		"ports; reduce instruction count with vector code or a better algorithm.",
	},
},
{
	.vendor = INTEL, .name = "tma_amx_busy",
	.title = "AMX Busy",
	.description =
		"Cycles the Advanced Matrix Extensions (AMX) tile unit was busy with "
		"tile arithmetic. High values in matrix code are good; the question is "
		"whether the rest of the core keeps it fed.",
	.causes = {
		"Matrix multiplication kernels in BF16 or INT8 (deep-learning inference "
		"and training).",
	},
	.hints = {
		"Count EXE.AMX_BUSY; if it is high but throughput disappoints, check "
		"Memory_Bound: tile loads must come from L1/L2, so block the matrices "
		"for the cache.",
	},
},

/* ---------------------------------------------------------------- Intel, Retiring */
{
	.vendor = INTEL, .name = "tma_light_operations",
	.title = "Light Operations",
	.description =
		"Part of Retiring spent on instructions that decode to a single uop. "
		"This is efficient execution; further gains come from needing fewer "
		"instructions.",
	.causes = {
		"A large instruction count: scalar loops, redundant loads and moves, "
		"bookkeeping.",
	},
	.hints = {
		"Level 3 breaks it down by kind (FP_Arith, Memory_Operations, branches, "
		"other); look for scalar FP that could be vector.",
		"Check that hot loops were vectorised (-O3 -march=native, "
		"-fopt-info-vec-missed) and that the algorithm does not repeat work.",
	},
},
{
	.vendor = INTEL, .name = "tma_fp_arith",
	.title = "FP Arithmetic",
	.description =
		"Share of retired work that was floating-point arithmetic: scalar, "
		"vector and legacy x87 together.",
	.causes = {
		"Numeric code; the interesting question is how much of it is scalar.",
	},
	.hints = {
		"Compare FP_Scalar with FP_Vector; count FP_ARITH_INST_RETIRED.* by width "
		"to see which vector sizes are used.",
	},
},
{
	.vendor = INTEL, .name = "tma_x87_use",
	.title = "x87 Use",
	.description =
		"Approximate share of retired work done with legacy x87 floating-point "
		"instructions.",
	.causes = {
		"long double arithmetic, 32-bit builds without SSE math, old libraries.",
	},
	.hints = {
		"Count UOPS_EXECUTED.X87; use double instead of long double and build "
		"with SSE/AVX math (the default for x86-64).",
	},
},
{
	.vendor = INTEL, .name = "tma_fp_scalar",
	.title = "FP Scalar",
	.description =
		"Approximate share of retired work that was scalar floating-point "
		"arithmetic: one element per instruction.",
	.causes = {
		"Loops the compiler did not vectorise: dependencies through memory, "
		"possible aliasing, calls in the loop, reductions without "
		"-ffast-math or -fassociative-math.",
	},
	.hints = {
		"Ask the compiler why: -fopt-info-vec-missed (GCC) or "
		"-Rpass-missed=loop-vectorize (Clang); add restrict, hoist calls, allow "
		"reassociation where it is numerically acceptable.",
	},
},
{
	.vendor = INTEL, .name = "tma_fp_vector",
	.title = "FP Vector",
	.description =
		"Approximate share of retired work that was vector floating-point "
		"arithmetic, of any width.",
	.causes = {
		"Vectorised numeric code; worth checking which widths are used.",
	},
	.hints = {
		"Count FP_ARITH_INST_RETIRED.128B_PACKED_*, 256B_PACKED_* and "
		"512B_PACKED_* to see the widths; build with -march matching the target "
		"to use the widest efficient vectors.",
	},
},
{
	.vendor = INTEL, .name = "tma_int_operations",
	.title = "Integer Vector Operations",
	.description =
		"Share of retired work that was selected vector integer arithmetic "
		"(adds, subtracts, multiplies, dot-product instructions) of 128 and "
		"256 bits.",
	.causes = {
		"Vectorised integer code: image processing, compression, quantised "
		"inference.",
	},
	.hints = {
		"Compare the 128- and 256-bit children; where only 128-bit is used, "
		"check whether the compiler could use wider vectors (-march).",
	},
},
{
	.vendor = INTEL, .name = "tma_int_vector_128b",
	.title = "Integer Vector 128-bit",
	.description =
		"Share of retired work that was 128-bit vector integer add/subtract/SAD "
		"or VNNI dot-product uops.",
	.causes = {
		"SSE-width integer code, or code built for a baseline target.",
	},
	.hints = {
		"Count INT_VEC_RETIRED.ADD_128 and INT_VEC_RETIRED.VNNI_128; rebuild hot "
		"kernels for AVX2 or newer where the target allows.",
	},
},
{
	.vendor = INTEL, .name = "tma_int_vector_256b",
	.title = "Integer Vector 256-bit",
	.description =
		"Share of retired work that was 256-bit vector integer "
		"add/subtract/SAD/multiply or VNNI dot-product uops.",
	.causes = {
		"AVX2 integer kernels.",
	},
	.hints = {
		"Count INT_VEC_RETIRED.ADD_256, MUL_256 and VNNI_256; on cores with "
		"VNNI, make sure dot products use it rather than separate multiply "
		"and add.",
	},
},
{
	.vendor = INTEL, .name = "tma_memory_operations",
	.title = "Memory Operations",
	.description =
		"Share of retired work spent on load and store uops (that hit and did "
		"not stall; stalls appear under Memory_Bound).",
	.causes = {
		"Values kept in memory rather than registers: spills, aliasing that "
		"forces reloads, copies of data.",
	},
	.hints = {
		"Look for reloads and spills with `topdown query --hot`; restrict-qualified "
		"pointers and fewer live variables let the compiler keep values in "
		"registers.",
	},
},
{
	.vendor = INTEL, .name = "tma_fused_instructions",
	.title = "Fused Instructions",
	.description =
		"Share of retired work where one uop stood for two instructions: a "
		"compare or test fused with the following conditional branch.",
	.causes = {
		"Loop and condition checks; fusion is good, it saves slots.",
	},
	.hints = {
		"Nothing to fix; a low value in branchy code may mean the compiler "
		"separated compare and branch, which -mtune for the target avoids.",
	},
},
{
	.vendor = INTEL, .name = "tma_non_fused_branches",
	.title = "Non-Fused Branches",
	.description =
		"Share of retired work spent on branch instructions that were not "
		"fused with a preceding compare.",
	.causes = {
		"Unconditional jumps, calls and returns; conditional branches whose "
		"flags come from an instruction that cannot fuse.",
	},
	.hints = {
		"Reduce call overhead by inlining hot small functions; let loops end on "
		"a compare-and-branch pair.",
	},
},
{
	.vendor = INTEL, .name = "tma_branch_instructions",
	.title = "Branch Instructions",
	.description =
		"Share of retired work spent on branch instructions of any kind.",
	.causes = {
		"Branch-heavy code: small functions, short loops, many conditions.",
	},
	.hints = {
		"Count BR_INST_RETIRED.ALL_BRANCHES per instruction; inline hot calls, "
		"unroll short loops, and replace chains of conditions by table lookups "
		"where possible.",
	},
},
{
	.vendor = INTEL, .name = "tma_other_light_ops",
	.title = "Other Light Operations",
	.description =
		"The rest of Light_Operations: single-uop instructions that are not "
		"floating-point arithmetic, memory operations or branches, such as "
		"integer arithmetic, moves, logic and NOPs.",
	.causes = {
		"Integer-heavy code and bookkeeping; NOP padding in hot code.",
	},
	.hints = {
		"Check Nop_Instructions and Shuffles_256b below it; otherwise look for "
		"algorithmic savings in the hottest functions.",
	},
},
{
	.vendor = INTEL, .name = "tma_nop_instructions",
	.ref_path = "Retiring.Light_Operations.Other_Light_Ops.Nop_Instructions",
	.title = "NOP Instructions",
	.description =
		"Share of retired work spent on NOP instructions, which only pad code.",
	.causes = {
		"Alignment padding executed inside hot loops or between hot blocks.",
	},
	.hints = {
		"Count INST_RETIRED.NOP; if high, reduce alignment directives for hot "
		"code that falls through into padding (e.g. -falign-jumps, "
		"-falign-labels) or reorder blocks (PGO, BOLT).",
	},
},
{
	.vendor = INTEL, .name = "tma_shuffles_256b",
	.ref_path = "Retiring.Light_Operations.Other_Light_Ops.Shuffles_256b",
	.title = "256-bit Shuffles",
	.description =
		"Share of retired work spent on 256-bit vector shuffle and permute "
		"operations.",
	.causes = {
		"Data layout that needs rearranging inside registers (array of "
		"structures processed with vectors, transposes).",
	},
	.hints = {
		"Count INT_VEC_RETIRED.SHUFFLES; change the data layout to structure of "
		"arrays so that vectors load what they need directly.",
	},
},
{
	.vendor = INTEL, .name = "tma_heavy_operations",
	.title = "Heavy Operations",
	.description =
		"Part of Retiring spent on instructions that need two or more uops, "
		"including microcoded sequences. These cost more slots per instruction "
		"than simple ones.",
	.causes = {
		"Complex instructions: memory-destination read-modify-write, some "
		"vector conversions and gathers, string instructions.",
		"Microcode assists.",
	},
	.hints = {
		"Level 3 separates Few_Uops_Instructions from Microcode_Sequencer.",
		"Count IDQ.MS_UOPS for the microcode share and look at the hottest "
		"instructions with `topdown query --hot`.",
	},
},
{
	.vendor = INTEL, .name = "tma_few_uops_instructions",
	.title = "Few-Uops Instructions",
	.description =
		"Part of Heavy_Operations from instructions that decode into a few uops "
		"(two to four) without the microcode sequencer.",
	.causes = {
		"Read-modify-write arithmetic on memory, some conversions, "
		"vector inserts and extracts.",
	},
	.hints = {
		"Look at the hot instructions with `topdown query --hot`; equivalent shorter "
		"sequences often exist (-mtune for the target lets the compiler choose).",
	},
},
{
	.vendor = INTEL, .name = "tma_microcode_sequencer",
	.title = "Microcode Sequencer",
	.description =
		"Part of Heavy_Operations from uops supplied by the microcode sequencer: "
		"instructions too complex for the decoders, and assists.",
	.causes = {
		"Microcoded instructions: CPUID, some string and divide instructions.",
		"Assists, such as floating-point operations on denormal values.",
	},
	.hints = {
		"Count IDQ.MS_UOPS; on Alder Lake, Sapphire Rapids and newer sample "
		"`topdown collect --pid PID --sample=frontend_retired.ms_flows`.",
		"Check the Assists child before rewriting instructions.",
	},
},
{
	.vendor = INTEL, .name = "tma_assists",
	.ref_path = "Retiring.Heavy_Operations.Microcode_Sequencer.Assists",
	.title = "Assists",
	.description =
		"Estimated slots spent in microcode assists: rare cases the hardware "
		"hands to microcode, such as floating-point operations on denormal "
		"numbers, some page-table updates and mixing SSE with AVX state.",
	.causes = {
		"Denormal (subnormal) floating-point inputs or results.",
		"Writes that must set accessed/dirty bits in page tables.",
		"Transitions between SSE and AVX code without vzeroupper.",
	},
	.hints = {
		"Count ASSISTS.ANY (OTHER_ASSISTS.ANY on Skylake) and ASSISTS.FP where "
		"present.",
		"Flush denormals to zero (set FTZ/DAZ, or -ffast-math at link time), "
		"and build all vector code with the same -m options.",
	},
},
{
	.vendor = INTEL, .name = "tma_cisc",
	.title = "CISC Instructions",
	.description =
		"Estimated slots spent on uops of complex instructions delivered by "
		"microcode, other than assists. On hybrid E-cores (cpu_atom) the node "
		"sits under the frontend and counts slots the frontend lost while such "
		"instructions were delivered from microcode.",
	.causes = {
		"Microcoded instructions in hot code: CPUID, RDRAND, repeated string "
		"instructions, some legacy instructions.",
	},
	.hints = {
		"Find them with `topdown query --hot` on the hottest functions and replace "
		"them with simpler sequences, or call them less often.",
	},
},

/* ---------------------------------------------------------------- Intel E-cores (cpu_atom) */
{
	.vendor = INTEL, .name = "tma_ifetch_latency",
	.title = "Instruction Fetch Latency (E-core)",
	.description =
		"E-core part of Frontend_Bound where fetch was waiting: instruction "
		"cache or ITLB misses, branch detection and resteers.",
	.causes = {
		"A large code footprint and many taken branches.",
	},
	.hints = {
		"Go one level down: `topdown collect --level 3 --process NAME`; the "
		"cpu_atom TOPDOWN_FE_BOUND.* events split it further.",
		"Same remedies as on P-cores: grouped hot code (PGO, BOLT), huge pages "
		"for text.",
	},
},
{
	.vendor = INTEL, .name = "tma_branch_detect",
	.title = "Branch Detect (E-core)",
	.description =
		"E-core slots lost when a later predictor stage corrected the branch "
		"target buffer: the branch was unknown to it or its prediction was "
		"overridden.",
	.causes = {
		"More branches than the branch target buffer holds; cold code.",
	},
	.hints = {
		"Count cpu_atom/topdown_fe_bound.branch_detect/; reduce taken branches "
		"and code size on the hot path.",
	},
},
{
	.vendor = INTEL, .name = "tma_branch_resteer",
	.title = "Branch Resteer (E-core)",
	.description =
		"E-core slots lost to fetch redirections when the branch target buffer "
		"predicted a taken branch.",
	.causes = {
		"Many taken branches in hot code.",
	},
	.hints = {
		"Let the common path fall through (PGO, BOLT) and inline hot small "
		"functions.",
	},
},
{
	.vendor = INTEL, .name = "tma_ifetch_bandwidth",
	.title = "Instruction Fetch Bandwidth (E-core)",
	.description =
		"E-core part of Frontend_Bound where fetch delivered uops, but fewer "
		"than the allocation width, because of decode, predecode, complex "
		"instructions or other limits.",
	.causes = {
		"Instruction mixes the E-core decoders handle slowly; complex "
		"instructions.",
	},
	.hints = {
		"Level 3 splits it (Decode, Predecode, CISC, Other_FB); count the "
		"cpu_atom TOPDOWN_FE_BOUND.* events.",
	},
},
{
	.vendor = INTEL, .name = "tma_decode",
	.title = "Decode (E-core)",
	.description =
		"E-core slots lost to decoder limits.",
	.causes = {
		"Instruction sequences the decoders cannot process at full rate.",
	},
	.hints = {
		"Count cpu_atom/topdown_fe_bound.decode/; compiling with -mtune for the "
		"E-core generation may choose friendlier encodings.",
	},
},
{
	.vendor = INTEL, .name = "tma_predecode",
	.title = "Predecode (E-core)",
	.description =
		"E-core slots lost because instruction boundaries were marked wrongly "
		"and had to be recomputed.",
	.causes = {
		"Code whose instruction lengths the predecoder guesses wrongly, e.g. "
		"first executions and instructions with unusual prefixes.",
	},
	.hints = {
		"Count cpu_atom/topdown_fe_bound.predecode/; keep hot code compact and "
		"avoid redundant prefixes.",
	},
},
{
	.vendor = INTEL, .name = "tma_other_fb",
	.title = "Other Frontend Bandwidth (E-core)",
	.description =
		"E-core frontend slots lost to causes not covered by the sibling "
		"nodes.",
	.causes = {
		"Miscellaneous frontend limits.",
	},
	.hints = {
		"Count cpu_atom/topdown_fe_bound.other/; act on it only after the named "
		"siblings are small.",
	},
},
{
	.vendor = INTEL, .name = "tma_fast_nuke",
	.title = "Fast Nuke (E-core)",
	.description =
		"E-core slots lost to machine clears handled without microcode: memory "
		"ordering, memory disambiguation and memory renaming conflicts.",
	.causes = {
		"Loads speculatively passing stores to the same address; data shared "
		"with other cores.",
	},
	.hints = {
		"Count cpu_atom/machine_clears.disambiguation/ and "
		"cpu_atom/machine_clears.memory_ordering/; use `perf c2c record -p PID` "
		"for sharing.",
	},
},
{
	.vendor = INTEL, .name = "tma_nuke",
	.title = "Nuke (E-core)",
	.description =
		"E-core slots lost to machine clears that need microcode: for example "
		"self-modifying code, page faults and floating-point assists.",
	.causes = {
		"JIT code patching, page faults in hot loops, denormal floating point.",
	},
	.hints = {
		"Count cpu_atom/machine_clears.smc/, cpu_atom/machine_clears.page_fault/ "
		"and cpu_atom/machine_clears.fp_assist/ to see which one.",
	},
},
{
	.vendor = INTEL, .name = "tma_resource_bound",
	.title = "Resource Bound (E-core)",
	.description =
		"E-core part of Backend_Bound where allocation stopped because a "
		"backend structure was full: reorder buffer, register file, schedulers, "
		"or serialization.",
	.causes = {
		"Cache misses that keep the reorder buffer full.",
		"Long-latency instructions filling the schedulers.",
	},
	.hints = {
		"Level 3 splits it (Mem_Scheduler, Non_Mem_Scheduler, Register, "
		"Reorder_Buffer, Serialization); count the cpu_atom TOPDOWN_BE_BOUND.* "
		"events.",
	},
},
{
	.vendor = INTEL, .name = "tma_mem_scheduler",
	.title = "Memory Scheduler (E-core)",
	.description =
		"E-core slots lost because the memory-operation scheduler could not "
		"accept more loads or stores.",
	.causes = {
		"Many loads or stores waiting on cache misses.",
	},
	.hints = {
		"Count cpu_atom/mem_scheduler_block.all/; reduce misses as for "
		"Memory_Bound (`perf mem record -p PID`).",
	},
},
{
	.vendor = INTEL, .name = "tma_non_mem_scheduler",
	.title = "Non-Memory Scheduler (E-core)",
	.description =
		"E-core slots lost because the integer, floating-point or vector "
		"schedulers were full.",
	.causes = {
		"Long dependency chains of arithmetic, divides.",
	},
	.hints = {
		"Count cpu_atom/topdown_be_bound.non_mem_scheduler/; break dependency "
		"chains and avoid divides in hot loops.",
	},
},
{
	.vendor = INTEL, .name = "tma_register",
	.title = "Register File (E-core)",
	.description =
		"E-core slots lost because no physical register was free for a new "
		"result.",
	.causes = {
		"Many instructions in flight behind a long stall, each holding a "
		"register.",
	},
	.hints = {
		"Count cpu_atom/topdown_be_bound.register/; usually a symptom of long "
		"misses: fix those first.",
	},
},
{
	.vendor = INTEL, .name = "tma_reorder_buffer",
	.title = "Reorder Buffer (E-core)",
	.description =
		"E-core slots lost because the reorder buffer was full, typically "
		"behind a long-latency instruction at its head.",
	.causes = {
		"Loads missing to L3 or memory at the head of the window.",
	},
	.hints = {
		"Count cpu_atom/topdown_be_bound.reorder_buffer/ and "
		"cpu_atom/ld_head.any_at_ret/; reduce cache misses.",
	},
},
{
	.vendor = INTEL, .name = "tma_serialization",
	.title = "Serialization (E-core)",
	.description =
		"E-core slots lost to scoreboard and serialization stalls from the "
		"instruction queue, the jump unit or the microcode sequencer.",
	.causes = {
		"Serializing instructions, PAUSE loops, microcoded instructions.",
	},
	.hints = {
		"Count cpu_atom/serialization.non_c01_ms_scb/; look for pause, lfence "
		"and cpuid in hot code.",
	},
},
{
	.vendor = INTEL, .name = "tma_allocation_restriction",
	.title = "Allocation Restriction (E-core)",
	.description =
		"E-core slots lost to restrictions at allocation, such as limits on "
		"how many uops of a kind can be allocated together.",
	.causes = {
		"Instruction mixes that hit allocation limits.",
	},
	.hints = {
		"Count cpu_atom/topdown_be_bound.alloc_restrictions/; check the hot "
		"instructions with `topdown query --hot`.",
	},
},

/* ---------------------------------------------------------------- Intel, Info metrics */
{
	.vendor = INTEL, .name = "tma_info_thread_ipc",
	.title = "IPC (Instructions per Cycle)",
	.description =
		"Instructions retired per unhalted core cycle of this thread. A summary "
		"of efficiency: compare it with the machine's issue width and with "
		"earlier runs of the same code, never across different programs.",
	.causes = {
		"Low IPC: stalls on memory, mispredictions, frontend starvation; the "
		"tree says which.",
		"High IPC with poor speed: too many instructions for the work (scalar "
		"code, redundant work).",
	},
	.hints = {
		"Read it next to the level-1 tree: `topdown query --tree --run-id ID`.",
		"Track it per thread over time; a drop after a change points at the "
		"change.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_thread_cpi",
	.title = "CPI (Cycles per Instruction)",
	.description =
		"Unhalted core cycles per retired instruction of this thread: the "
		"inverse of IPC, convenient when multiplying by instruction counts.",
	.causes = {
		"The same as for low IPC: memory stalls, mispredictions, frontend "
		"stalls, long-latency instructions.",
	},
	.hints = {
		"Use the tree to see what inflates it; `perf stat -e "
		"cycles,instructions -p PID` gives a quick cross-check.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_thread_slots",
	.title = "Slots",
	.description =
		"Issue-pipeline slots available to the thread: the cycles times the "
		"allocation width. Every level-1 node is a share of this number. On "
		"cores before Ice Lake the count is per physical core.",
	.causes = {
		"Not a problem indicator: it scales with time on CPU.",
	},
	.hints = {
		"Use it to weigh nodes across threads: a node's share times Slots gives "
		"the slots it cost.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_thread_clks",
	.title = "Clocks",
	.description =
		"Unhalted core cycles of the thread (CPU_CLK_UNHALTED.THREAD): the time "
		"it really ran, in cycles at the actual frequency.",
	.causes = {
		"Not a problem indicator: compare with wall time to see frequency and "
		"time off-CPU.",
	},
	.hints = {
		"Divide by the thread's on-CPU time to estimate its average frequency; "
		"low values hint at power limits or idle states.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_core_ipc",
	.title = "Core IPC (E-core)",
	.description =
		"Instructions retired per unhalted cycle on an E-core (cpu_atom).",
	.causes = {
		"The same causes as for any low IPC; the E-core tree shows which.",
	},
	.hints = {
		"Compare threads that ran on P-cores and E-cores separately; the same "
		"code typically has a lower IPC on E-cores.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_core_cpi",
	.title = "Core CPI (E-core)",
	.description =
		"Unhalted cycles per retired instruction on an E-core (cpu_atom): the "
		"inverse of its IPC.",
	.causes = {
		"Memory stalls, mispredictions and frontend stalls on the E-core.",
	},
	.hints = {
		"Read it with the E-core tree: `topdown query --tree --run-id ID`.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_bad_spec_ipmispredict",
	.title = "Instructions per Branch Mispredict",
	.description =
		"Retired instructions per mispredicted retired branch. The lower it "
		"is, the more often the predictor fails; below a few hundred, "
		"mispredictions usually cost noticeable time.",
	.causes = {
		"Data-dependent branches and indirect branches with many targets.",
	},
	.hints = {
		"Sample the mispredictions: `topdown collect --pid PID "
		"--sample=br_misp_retired.all_branches`, then `topdown query --hot`.",
		"See Branch_Mispredicts for remedies.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_br_inst_mix_ipmispredict",
	.title = "Instructions per Branch Mispredict (E-core)",
	.description =
		"Retired instructions per mispredicted branch on an E-core (cpu_atom).",
	.causes = {
		"Data-dependent branches and indirect branches with many targets.",
	},
	.hints = {
		"Sample the E-cores' mispredicts (BR_MISP_RETIRED.ALL_BRANCHES, event "
		"0xc5) with `topdown collect --pid PID --sample=cpu_atom/event=0xc5/` "
		"and look for the worst branches in `topdown query --hot`.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_br_mispredict_bound_branch_mispredict_ratio",
	.title = "Branch Mispredict Ratio (E-core)",
	.description =
		"Share of retired branches that were mispredicted on an E-core "
		"(cpu_atom).",
	.causes = {
		"Branches on unpredictable data.",
	},
	.hints = {
		"A few percent is typical; much higher warrants a look at the hottest "
		"branches, sampled as for Branch_Mispredicts (E-core).",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_l1mpki",
	.title = "L1D MPKI",
	.description =
		"Retired demand loads that missed the L1 data cache, per thousand "
		"instructions.",
	.causes = {
		"Working sets larger than L1, poor spatial locality, strided access.",
	},
	.hints = {
		"Compare with L2 and L3 MPKI to see how far misses travel; sample with "
		"`topdown collect --pid PID --sample=mem_load_retired.l1_miss`.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_l2mpki",
	.title = "L2 MPKI",
	.description =
		"Retired demand loads that missed the L2 cache, per thousand "
		"instructions.",
	.causes = {
		"Working sets larger than L2; access patterns the prefetchers miss.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=mem_load_retired.l2_miss`; tile "
		"loops for the L2 size.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_l3mpki",
	.title = "L3 MPKI",
	.description =
		"Retired demand loads that missed the last-level cache, per thousand "
		"instructions: the loads that went to memory.",
	.causes = {
		"Working sets larger than L3, pointer chasing over big data, "
		"interference from other processes sharing the L3.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=mem_load_retired.l3_miss` or "
		"`perf mem record -p PID`; see DRAM_Bound.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_tlb_load_stlb_mpki",
	.title = "Load STLB Walks per Kilo-instruction",
	.description =
		"Page walks caused by loads that missed the second-level TLB, per "
		"thousand instructions.",
	.causes = {
		"Large data in 4 KiB pages touched sparsely.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=mem_inst_retired.stlb_miss_loads`; "
		"back the data with huge pages.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_tlb_store_stlb_mpki",
	.title = "Store STLB Walks per Kilo-instruction",
	.description =
		"Page walks caused by stores that missed the second-level TLB, per "
		"thousand instructions.",
	.causes = {
		"Scattered stores over a large address range in 4 KiB pages.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=mem_inst_retired.stlb_miss_stores`"
		"; use huge pages for the written data.",
	},
},
{
	.vendor = INTEL, .name = "tma_info_memory_tlb_code_stlb_mpki",
	.title = "Code STLB Walks per Kilo-instruction",
	.description =
		"Page walks caused by instruction fetches that missed the second-level "
		"TLB, per thousand instructions.",
	.causes = {
		"Large code footprints spread over many 4 KiB pages.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=frontend_retired.stlb_miss`; map "
		"hot text with 2 MiB pages.",
	},
},

/* ---------------------------------------------------------------- Arm Neoverse, level 1 */
{
	.vendor = ARM, .name = "frontend_bound",
	.title = "Frontend Bound",
	.description =
		"Share of rename slots left empty because the frontend delivered no "
		"operations while the backend could have accepted them "
		"(STALL_SLOT_FRONTEND), minus the cycles spent recovering from flushes, "
		"which Bad_Speculation counts instead.",
	.causes = {
		"Instruction cache and instruction TLB misses from a large code "
		"footprint.",
		"Branch predictor limits: many taken branches, branch target buffer "
		"misses.",
	},
	.hints = {
		"On Neoverse V3 and N3, `topdown collect --level 4 --process NAME` "
		"splits it into core (branch flow) and memory (cache, TLB) causes.",
		"Check l1i_cache_mpki, itlb_mpki and branch_mpki; sample with "
		"`topdown collect --pid PID --sample=stall_frontend`.",
		"Shrink and order hot code: PGO, link-time ordering, BOLT (which "
		"supports AArch64).",
	},
},
{
	.vendor = ARM, .name = "bad_speculation",
	.title = "Bad Speculation",
	.description =
		"Share of slots spent on operations that never retired (OP_SPEC minus "
		"OP_RETIRED, scaled to the non-stalled slots), plus cycles the frontend "
		"spent recovering from flushes.",
	.causes = {
		"Mispredicted branches on data-dependent conditions or indirect "
		"targets.",
		"Pipeline flushes from exceptions and memory-ordering violations.",
	},
	.hints = {
		"Check branch_mpki and branch_misprediction_ratio; sample with "
		"`topdown collect --pid PID --sample=br_mis_pred_retired`, then `topdown query --hot`.",
		"Make hot branches predictable or branch-free (csel, arithmetic masks).",
	},
},
{
	.vendor = ARM, .name = "backend_bound",
	.title = "Backend Bound",
	.description =
		"Share of rename slots left empty because the backend could not accept "
		"operations (STALL_SLOT_BACKEND): issue queues, rename registers or "
		"memory resources were full.",
	.causes = {
		"Data cache and data TLB misses.",
		"Long-latency arithmetic and dependency chains filling the issue queues.",
	},
	.hints = {
		"On Neoverse V3 and N3, `topdown collect --level 4 --process NAME` "
		"splits it into memory (L1D, L2, TLB, stores) and core causes.",
		"Elsewhere check l1d_cache_mpki, l2_cache_mpki, ll_cache_read_mpki and "
		"dtlb_mpki; `perf mem record -p PID` samples loads where the kernel "
		"supports the Statistical Profiling Extension (SPE).",
	},
},
{
	.vendor = ARM, .name = "retiring",
	.title = "Retiring",
	.description =
		"Share of slots used by operations that retired: useful work. High "
		"values mean the core is busy; speed-ups then come from needing fewer "
		"or wider operations.",
	.causes = {
		"Scalar code that could use Advanced SIMD or SVE.",
		"Redundant work in the algorithm.",
	},
	.hints = {
		"Check the operation mix (load_percentage, simd_percentage, "
		"sve_all_percentage, scalar_fp_percentage) and vectorise hot loops "
		"(-O3 -mcpu=native).",
	},
},
{
	.vendor = ARM, .name = "frontend_stalled_cycles",
	.title = "Frontend Stalled Cycles",
	.description =
		"Share of cycles in which the frontend sent no operations to rename "
		"(STALL_FRONTEND). On Neoverse N1, which has no slot events, this and "
		"Backend_Stalled_Cycles are the top level of the tree; they are shares "
		"of cycles, not of slots, and need not add up to 100%.",
	.causes = {
		"Instruction cache and TLB misses, branch predictor limits, refetch "
		"after mispredictions.",
	},
	.hints = {
		"Check l1i_cache_mpki, itlb_mpki and branch_mpki; sample with "
		"`topdown collect --pid PID --sample=stall_frontend`.",
	},
},
{
	.vendor = ARM, .name = "backend_stalled_cycles",
	.title = "Backend Stalled Cycles",
	.description =
		"Share of cycles in which rename could send no operations to the "
		"backend because a backend resource was full (STALL_BACKEND). On "
		"Neoverse N1 this is a top-level node; it is a share of cycles, not of "
		"slots.",
	.causes = {
		"Data cache and TLB misses, long-latency operations, full issue queues.",
	},
	.hints = {
		"Check l1d_cache_mpki, l2_cache_mpki, ll_cache_read_mpki and dtlb_mpki; "
		"sample with `topdown collect --pid PID --sample=stall_backend`.",
	},
},

/* ---------------------------------------------------------------- Arm, Frontend_Bound (V3, N3) */
{
	.vendor = ARM, .name = "frontend_core_bound",
	.title = "Frontend Core Bound",
	.description =
		"Share of frontend stall cycles caused by the core's own frontend "
		"resources rather than memory: branch prediction flow and recovery "
		"from flushes (STALL_FRONTEND_CPUBOUND / STALL_FRONTEND).",
	.causes = {
		"Many taken branches, branch predictor capacity limits, resteers after "
		"mispredictions.",
	},
	.hints = {
		"Look at its children Frontend_Core_Flow_Bound and "
		"Frontend_Core_Flush_Bound, and at branch_mpki.",
	},
},
{
	.vendor = ARM, .name = "frontend_core_flow_bound",
	.title = "Frontend Core Flow Bound",
	.description =
		"Share of core-bound frontend stall cycles where the branch prediction "
		"unit could not supply fetch addresses fast enough "
		"(STALL_FRONTEND_FLOW).",
	.causes = {
		"Dense taken branches, large branch working sets, indirect branches.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=stall_frontend_flow`; reduce taken "
		"branches on the hot path (PGO, BOLT, inlining small hot functions).",
	},
},
{
	.vendor = ARM, .name = "frontend_core_flush_bound",
	.title = "Frontend Core Flush Bound",
	.description =
		"Share of core-bound frontend stall cycles spent recovering from a "
		"pipeline flush or resteer (STALL_FRONTEND_FLUSH): the refetch cost "
		"after mispredictions and exceptions.",
	.causes = {
		"Mispredicted branches; exceptions and other flushes.",
	},
	.hints = {
		"Reduce mispredictions: `topdown collect --pid PID --sample=br_mis_pred_retired`, "
		"then make the hot branches predictable.",
	},
},
{
	.vendor = ARM, .name = "frontend_mem_bound",
	.title = "Frontend Memory Bound",
	.description =
		"Share of frontend stall cycles caused by instruction fetch waiting on "
		"the memory system: instruction cache or instruction TLB misses "
		"(STALL_FRONTEND_MEMBOUND / STALL_FRONTEND).",
	.causes = {
		"Large or scattered code: big binaries, many shared libraries, JIT code.",
	},
	.hints = {
		"Look at its children (cache vs TLB) and at l1i_cache_mpki and "
		"itlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "frontend_mem_cache_bound",
	.title = "Frontend Memory Cache Bound",
	.description =
		"Share of memory-bound frontend stall cycles waiting on instruction "
		"cache misses, in L1I or L2 (STALL_FRONTEND_L1I + STALL_FRONTEND_MEM).",
	.causes = {
		"Hot code larger than the L1 instruction cache, poor code locality.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=l1i_cache_refill`; group hot code "
		"with PGO or BOLT.",
	},
},
{
	.vendor = ARM, .name = "frontend_cache_l1i_bound",
	.title = "Frontend L1I Bound",
	.description =
		"Share of instruction-cache stall cycles counted as waiting on the L1 "
		"instruction cache (STALL_FRONTEND_L1I), against those waiting on L2 "
		"(Frontend_Cache_L2I_Bound).",
	.causes = {
		"Code somewhat larger than L1I, or hot and cold code mixed in the same "
		"lines.",
	},
	.hints = {
		"Check l1i_cache_mpki; reorder functions by profile so hot code is "
		"contiguous.",
	},
},
{
	.vendor = ARM, .name = "frontend_cache_l2i_bound",
	.title = "Frontend L2 Bound",
	.description =
		"Share of instruction-cache stall cycles counted as waiting on a fetch "
		"pending in the last core-private cache, L2 (STALL_FRONTEND_MEM), "
		"against those waiting on L1I (Frontend_Cache_L1I_Bound). Large values "
		"point at code that does not fit in L2.",
	.causes = {
		"A very large code footprint; code evicted from L2 by data.",
	},
	.hints = {
		"Check l2_cache_mpki and ll_cache_read_mpki; shrink the hot code "
		"(PGO, BOLT, fewer libraries on the hot path).",
	},
},
{
	.vendor = ARM, .name = "frontend_mem_tlb_bound",
	.title = "Frontend Memory TLB Bound",
	.description =
		"Share of memory-bound frontend stall cycles waiting on instruction "
		"TLB misses (STALL_FRONTEND_TLB).",
	.causes = {
		"Hot code spread over many pages, especially with 4 KiB pages.",
	},
	.hints = {
		"Check itlb_mpki and l1i_tlb_mpki; map hot text with huge pages, or run "
		"a kernel with 64 KiB base pages for large-code workloads.",
	},
},

/* ---------------------------------------------------------------- Arm, Backend_Bound (V3, N3) */
{
	.vendor = ARM, .name = "backend_core_bound",
	.title = "Backend Core Bound",
	.description =
		"Share of backend stall cycles caused by core resources other than "
		"memory: rename registers, issue queues, execution units "
		"(STALL_BACKEND_CPUBOUND / STALL_BACKEND).",
	.causes = {
		"Long dependency chains, long-latency operations (division, square "
		"root), many operations for one kind of unit.",
	},
	.hints = {
		"Look at Backend_Core_Rename_Bound and Backend_Busy_Bound; find hot "
		"instructions with `topdown collect --pid PID --sample=cpu_cycles` and `topdown query --hot`.",
	},
},
{
	.vendor = ARM, .name = "backend_core_rename_bound",
	.title = "Backend Core Rename Bound",
	.description =
		"Share of core-bound backend stall cycles where operations were ready "
		"but no rename register was free (STALL_BACKEND_RENAME).",
	.causes = {
		"Many operations in flight behind long-latency ones, each holding a "
		"physical register.",
	},
	.hints = {
		"Usually a symptom of long stalls ahead: reduce cache misses and break "
		"long dependency chains.",
	},
},
{
	.vendor = ARM, .name = "backend_busy_bound",
	.title = "Backend Busy Bound",
	.description =
		"Share of backend stall cycles where the issue queues were full "
		"(STALL_BACKEND_BUSY): more operations waiting for execution units "
		"than the queues hold.",
	.causes = {
		"Operations waiting on long-latency results; pressure on one kind of "
		"execution unit.",
	},
	.hints = {
		"Check the operation mix (load_percentage, simd_percentage, "
		"integer_dp_percentage) for a dominant kind; break dependency chains "
		"with independent accumulators.",
	},
},
{
	.vendor = ARM, .name = "backend_mem_bound",
	.title = "Backend Memory Bound",
	.description =
		"Share of backend stall cycles caused by memory resources: data cache "
		"misses, data TLB misses and stores waiting to complete "
		"(STALL_BACKEND_MEMBOUND / STALL_BACKEND).",
	.causes = {
		"Working sets larger than the caches, pointer chasing, sparse access "
		"over large memory.",
	},
	.hints = {
		"Look at its children (cache, TLB, store); `perf mem record -p PID` "
		"samples loads with their data source where SPE is available.",
	},
},
{
	.vendor = ARM, .name = "backend_mem_cache_bound",
	.title = "Backend Memory Cache Bound",
	.description =
		"Share of memory-bound backend stall cycles with a demand data miss "
		"outstanding in L1D or L2 (STALL_BACKEND_L1D + STALL_BACKEND_MEM).",
	.causes = {
		"Data that does not fit the L1D or L2 cache, or an access pattern the "
		"prefetchers do not follow.",
	},
	.hints = {
		"Check l1d_cache_mpki and l2_cache_mpki; sample with `topdown collect --pid PID "
		"--sample=l1d_cache_refill`.",
	},
},
{
	.vendor = ARM, .name = "backend_cache_l1d_bound",
	.title = "Backend L1D Bound",
	.description =
		"Share of data-cache stall cycles counted as waiting on an L1 data cache "
		"miss (STALL_BACKEND_L1D), against those waiting on a miss in L2 "
		"(Backend_Cache_L2D_Bound).",
	.causes = {
		"A working set larger than L1D but within L2; strided access.",
	},
	.hints = {
		"Block loops for the L1D size; pack the fields used together; "
		"prefetch a few iterations ahead with __builtin_prefetch.",
	},
},
{
	.vendor = ARM, .name = "backend_cache_l2d_bound",
	.title = "Backend L2 Bound",
	.description =
		"Share of data-cache stall cycles counted as waiting on a demand miss in "
		"the last core-private cache, L2 (STALL_BACKEND_MEM): data that had to "
		"come from the system-level cache or DRAM.",
	.causes = {
		"Working sets larger than L2; pointer chasing over large data.",
		"Memory on a remote NUMA node or chiplet.",
	},
	.hints = {
		"Check ll_cache_read_mpki and ll_cache_read_miss_ratio to see how much "
		"reaches DRAM; tile for L2; check placement with `numastat -p PID`.",
	},
},
{
	.vendor = ARM, .name = "backend_mem_tlb_bound",
	.title = "Backend Memory TLB Bound",
	.description =
		"Share of memory-bound backend stall cycles waiting on data TLB misses "
		"(STALL_BACKEND_TLB).",
	.causes = {
		"Large data touched sparsely with 4 KiB pages.",
	},
	.hints = {
		"Check dtlb_mpki and dtlb_walk_ratio; enable transparent huge pages for "
		"the big allocations (madvise(MADV_HUGEPAGE)) or use a 64 KiB-page "
		"kernel.",
	},
},
{
	.vendor = ARM, .name = "backend_mem_store_bound",
	.title = "Backend Memory Store Bound",
	.description =
		"Share of memory-bound backend stall cycles with a store that has not "
		"yet reached the pre-commit stage (STALL_BACKEND_ST): stores backing up.",
	.causes = {
		"Bursts of stores missing the cache; stores to lines shared with other "
		"cores.",
	},
	.hints = {
		"Check store_percentage; for shared lines use `perf c2c record -p PID` "
		"where SPE is available, and pad data written by different threads.",
	},
},

/* ---------------------------------------------------------------- Arm, Info metrics */
{
	.vendor = ARM, .name = "ipc",
	.title = "IPC (Instructions per Cycle)",
	.description =
		"Instructions retired per CPU cycle (INST_RETIRED / CPU_CYCLES).",
	.causes = {
		"Low values: stalls in the frontend or backend; the stall metrics "
		"say which.",
	},
	.hints = {
		"Compare with earlier runs of the same code and read it with the "
		"level-1 tree (`topdown query --tree --run-id ID`).",
	},
},
{
	.vendor = ARM, .name = "branch_mpki",
	.title = "Branch MPKI",
	.description =
		"Mispredicted retired branches per thousand instructions.",
	.causes = {
		"Data-dependent conditions, indirect branches with many targets.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=br_mis_pred_retired` and make the "
		"worst branches predictable or branch-free.",
	},
},
{
	.vendor = ARM, .name = "branch_misprediction_ratio",
	.title = "Branch Misprediction Ratio",
	.description =
		"Share of retired branches that were mispredicted.",
	.causes = {
		"Branches on unpredictable data.",
	},
	.hints = {
		"Weigh it with branch_mpki: a high ratio on few branches matters less "
		"than a moderate ratio in a branch-heavy loop.",
	},
},
{
	.vendor = ARM, .name = "branch_direct_ratio",
	.title = "Direct Branch Ratio",
	.description =
		"Share of retired branches that were direct (immediate-target) branches.",
	.causes = {
		"Descriptive: most code is dominated by direct branches.",
	},
	.hints = {
		"A low value means many indirect branches and returns; check "
		"branch_indirect_ratio.",
	},
},
{
	.vendor = ARM, .name = "branch_indirect_ratio",
	.title = "Indirect Branch Ratio",
	.description =
		"Share of retired branches that were indirect (register-target) "
		"branches, returns included.",
	.causes = {
		"Virtual calls, function pointers, interpreters, switch tables.",
	},
	.hints = {
		"If high and branch_mpki is high too, devirtualise or batch by type so "
		"each call site sees fewer targets.",
	},
},
{
	.vendor = ARM, .name = "branch_return_ratio",
	.title = "Return Branch Ratio",
	.description =
		"Share of retired branches that were function returns.",
	.causes = {
		"Many small function calls.",
	},
	.hints = {
		"A high value suggests call overhead; inline small hot functions (LTO "
		"helps across files).",
	},
},
{
	.vendor = ARM, .name = "l1i_cache_mpki",
	.title = "L1I Cache MPKI",
	.description =
		"L1 instruction cache refills per thousand instructions.",
	.causes = {
		"Large or scattered hot code.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=l1i_cache_refill`; order hot code "
		"together (PGO, BOLT).",
	},
},
{
	.vendor = ARM, .name = "l1i_cache_miss_ratio",
	.title = "L1I Cache Miss Ratio",
	.description =
		"Share of L1 instruction cache accesses that missed.",
	.causes = {
		"Code footprint larger than L1I.",
	},
	.hints = {
		"Read it with l1i_cache_mpki; the MPKI says how much it costs per unit "
		"of work.",
	},
},
{
	.vendor = ARM, .name = "l1d_cache_mpki",
	.title = "L1D Cache MPKI",
	.description =
		"L1 data cache refills per thousand instructions.",
	.causes = {
		"Working sets larger than L1D, poor spatial locality.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=l1d_cache_refill`; block loops for "
		"the L1D size.",
	},
},
{
	.vendor = ARM, .name = "l1d_cache_miss_ratio",
	.title = "L1D Cache Miss Ratio",
	.description =
		"Share of L1 data cache accesses that missed.",
	.causes = {
		"Working sets larger than L1D; streaming access without reuse.",
	},
	.hints = {
		"Read it with l1d_cache_mpki and backend_stalled_cycles to judge the "
		"cost.",
	},
},
{
	.vendor = ARM, .name = "l2_cache_mpki",
	.title = "L2 Cache MPKI",
	.description =
		"L2 cache refills (data and, on these cores, instructions) per thousand "
		"instructions.",
	.causes = {
		"Working sets larger than L2.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=l2d_cache_refill`; tile for the L2 "
		"size.",
	},
},
{
	.vendor = ARM, .name = "l2_cache_miss_ratio",
	.title = "L2 Cache Miss Ratio",
	.description =
		"Share of L2 cache accesses that missed.",
	.causes = {
		"Working sets larger than L2; little reuse.",
	},
	.hints = {
		"Read it with l2_cache_mpki and ll_cache_read_mpki.",
	},
},
{
	.vendor = ARM, .name = "ll_cache_read_mpki",
	.title = "Last-Level Cache Read MPKI",
	.description =
		"Reads that missed the system-level (last-level) cache, per thousand "
		"instructions: the reads served by DRAM.",
	.causes = {
		"Working sets larger than the system-level cache, or the cache shared "
		"with noisy neighbours.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=ll_cache_miss_rd`; reduce the "
		"footprint and check NUMA placement (`numastat -p PID`).",
	},
},
{
	.vendor = ARM, .name = "ll_cache_read_miss_ratio",
	.title = "Last-Level Cache Read Miss Ratio",
	.description =
		"Share of reads reaching the last-level cache that missed it.",
	.causes = {
		"Little reuse at the system-level cache.",
	},
	.hints = {
		"Read it with ll_cache_read_mpki.",
	},
},
{
	.vendor = ARM, .name = "ll_cache_read_hit_ratio",
	.title = "Last-Level Cache Read Hit Ratio",
	.description =
		"Share of reads reaching the last-level cache that hit it.",
	.causes = {
		"Descriptive: high values mean the system-level cache is useful.",
	},
	.hints = {
		"Read it with ll_cache_read_mpki.",
	},
},
{
	.vendor = ARM, .name = "itlb_mpki",
	.title = "ITLB Walks per Kilo-instruction",
	.description =
		"Instruction translation-table walks per thousand instructions.",
	.causes = {
		"Hot code spread over many pages.",
	},
	.hints = {
		"Map hot text with huge pages; order hot code together.",
	},
},
{
	.vendor = ARM, .name = "itlb_walk_ratio",
	.title = "ITLB Walk Ratio",
	.description =
		"Instruction translation-table walks per L1 instruction TLB access.",
	.causes = {
		"Hot code spread over many pages.",
	},
	.hints = {
		"Read it with itlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "dtlb_mpki",
	.title = "DTLB Walks per Kilo-instruction",
	.description =
		"Data translation-table walks per thousand instructions.",
	.causes = {
		"Large data touched sparsely in small pages.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=dtlb_walk`; use transparent huge "
		"pages or a 64 KiB-page kernel.",
	},
},
{
	.vendor = ARM, .name = "dtlb_walk_ratio",
	.title = "DTLB Walk Ratio",
	.description =
		"Data translation-table walks per L1 data TLB access.",
	.causes = {
		"Large data touched sparsely in small pages.",
	},
	.hints = {
		"Read it with dtlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "l1i_tlb_mpki",
	.title = "L1 ITLB MPKI",
	.description =
		"L1 instruction TLB refills per thousand instructions (most are served "
		"by the L2 TLB without a walk).",
	.causes = {
		"Hot code spread over more pages than the L1 ITLB holds.",
	},
	.hints = {
		"Compare with itlb_mpki to see how many refills needed a walk.",
	},
},
{
	.vendor = ARM, .name = "l1i_tlb_miss_ratio",
	.title = "L1 ITLB Miss Ratio",
	.description =
		"Share of L1 instruction TLB accesses that missed.",
	.causes = {
		"Scattered hot code.",
	},
	.hints = {
		"Read it with l1i_tlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "l1d_tlb_mpki",
	.title = "L1 DTLB MPKI",
	.description =
		"L1 data TLB refills per thousand instructions (most are served by the "
		"L2 TLB without a walk).",
	.causes = {
		"Data spread over more pages than the L1 DTLB holds.",
	},
	.hints = {
		"Compare with dtlb_mpki to see how many refills needed a walk.",
	},
},
{
	.vendor = ARM, .name = "l1d_tlb_miss_ratio",
	.title = "L1 DTLB Miss Ratio",
	.description =
		"Share of L1 data TLB accesses that missed.",
	.causes = {
		"Sparse access over many pages.",
	},
	.hints = {
		"Read it with l1d_tlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "l2_tlb_mpki",
	.title = "L2 TLB MPKI",
	.description =
		"Unified L2 TLB refills per thousand instructions: translations that "
		"needed a table walk.",
	.causes = {
		"Code and data spread over more pages than the L2 TLB holds.",
	},
	.hints = {
		"Use huge pages for the largest mappings; check dtlb_mpki and itlb_mpki "
		"to see which side dominates.",
	},
},
{
	.vendor = ARM, .name = "l2_tlb_miss_ratio",
	.title = "L2 TLB Miss Ratio",
	.description =
		"Share of unified L2 TLB accesses that missed.",
	.causes = {
		"Large, sparse address footprints.",
	},
	.hints = {
		"Read it with l2_tlb_mpki.",
	},
},
{
	.vendor = ARM, .name = "load_percentage",
	.title = "Load Operations",
	.description =
		"Share of speculatively executed operations that were loads.",
	.causes = {
		"Descriptive: memory-heavy code, spills, copies.",
	},
	.hints = {
		"A high share with high backend stalls points at memory; look for "
		"avoidable reloads with `topdown query --hot`.",
	},
},
{
	.vendor = ARM, .name = "store_percentage",
	.title = "Store Operations",
	.description =
		"Share of speculatively executed operations that were stores.",
	.causes = {
		"Descriptive: output-heavy code, copies, spills.",
	},
	.hints = {
		"Look for avoidable copies and spills; check backend_mem_store_bound "
		"on cores that have it.",
	},
},
{
	.vendor = ARM, .name = "branch_percentage",
	.title = "Branch Operations",
	.description =
		"Share of speculatively executed operations that were branches.",
	.causes = {
		"Descriptive: control-heavy code, small functions, short loops.",
	},
	.hints = {
		"Inline small hot functions and unroll short loops to reduce it.",
	},
},
{
	.vendor = ARM, .name = "integer_dp_percentage",
	.title = "Integer Operations",
	.description =
		"Share of speculatively executed operations that were integer "
		"data-processing operations.",
	.causes = {
		"Descriptive: integer and bookkeeping work.",
	},
	.hints = {
		"If the loop is regular, check whether it could be vectorised with "
		"Advanced SIMD or SVE.",
	},
},
{
	.vendor = ARM, .name = "simd_percentage",
	.title = "Advanced SIMD Operations",
	.description =
		"Share of speculatively executed operations that were Advanced SIMD "
		"(Neon) operations.",
	.causes = {
		"Descriptive: vectorised code.",
	},
	.hints = {
		"Low values in numeric loops mean missed vectorisation: check compiler "
		"reports (-fopt-info-vec-missed, -Rpass-missed=loop-vectorize).",
	},
},
{
	.vendor = ARM, .name = "scalar_fp_percentage",
	.title = "Scalar Floating-Point Operations",
	.description =
		"Share of speculatively executed operations that were scalar "
		"floating-point operations.",
	.causes = {
		"Numeric loops the compiler did not vectorise.",
	},
	.hints = {
		"Ask the compiler why loops were not vectorised; allow reassociation "
		"for reductions where numerically acceptable.",
	},
},
{
	.vendor = ARM, .name = "crypto_percentage",
	.title = "Crypto Operations",
	.description =
		"Share of speculatively executed operations that were cryptographic "
		"instructions (AES, SHA).",
	.causes = {
		"Descriptive: encryption and hashing.",
	},
	.hints = {
		"Zero in crypto-heavy services means the library is not using the "
		"hardware instructions; check its build and CPU feature detection.",
	},
},
{
	.vendor = ARM, .name = "sve_all_percentage",
	.title = "SVE Operations",
	.description =
		"Share of speculatively executed operations that were SVE operations, "
		"loads and stores included.",
	.causes = {
		"Descriptive: code built for SVE.",
	},
	.hints = {
		"Zero on an SVE-capable core means the code was built without SVE "
		"(try -mcpu=native or -march=armv8-a+sve for hot kernels).",
	},
},
{
	.vendor = ARM, .name = "barrier_percentage",
	.title = "Barrier Operations",
	.description =
		"Share of speculatively executed operations that were barriers (ISB, "
		"DSB, DMB).",
	.causes = {
		"Memory barriers in locks and atomics, especially code built for "
		"Armv8.0 without LSE atomics.",
	},
	.hints = {
		"Build with LSE atomics (-march=armv8.1-a or later, or -moutline-atomics) "
		"and use acquire/release orderings instead of full barriers.",
	},
},
{
	.vendor = ARM, .name = "fp16_percentage",
	.title = "Half-Precision FP Operations",
	.description =
		"Share of speculatively executed operations that were half-precision "
		"floating-point operations.",
	.causes = {
		"Descriptive: FP16 inference or signal processing.",
	},
	.hints = {
		"Compare with fp32_percentage to see whether reduced precision is "
		"used where intended.",
	},
},
{
	.vendor = ARM, .name = "fp32_percentage",
	.title = "Single-Precision FP Operations",
	.description =
		"Share of speculatively executed operations that were single-precision "
		"floating-point operations.",
	.causes = {
		"Descriptive.",
	},
	.hints = {
		"If the algorithm tolerates it, FP16 or BF16 halves the data moved.",
	},
},
{
	.vendor = ARM, .name = "fp64_percentage",
	.title = "Double-Precision FP Operations",
	.description =
		"Share of speculatively executed operations that were double-precision "
		"floating-point operations.",
	.causes = {
		"Descriptive; sometimes accidental (double literals in float code).",
	},
	.hints = {
		"Check for unintended promotion to double (use 1.0f literals, "
		"-Wdouble-promotion).",
	},
},
{
	.vendor = ARM, .name = "fp_ops_per_cycle",
	.title = "FP Operations per Cycle",
	.description =
		"Floating-point operations (scalar, Neon and SVE, counted per element) "
		"executed per cycle.",
	.causes = {
		"Descriptive: the achieved floating-point throughput.",
	},
	.hints = {
		"Compare with the core's peak to see how far from compute-bound the "
		"code is; check sve_fp_ops_per_cycle for the vector share.",
	},
},
{
	.vendor = ARM, .name = "nonsve_fp_ops_per_cycle",
	.title = "Non-SVE FP Operations per Cycle",
	.description =
		"Floating-point operations per cycle from scalar and Advanced SIMD "
		"instructions.",
	.causes = {
		"Descriptive.",
	},
	.hints = {
		"If most FP work is here on an SVE core, consider building hot kernels "
		"for SVE.",
	},
},
{
	.vendor = ARM, .name = "sve_fp_ops_per_cycle",
	.title = "SVE FP Operations per Cycle",
	.description =
		"Floating-point operations per cycle from SVE instructions.",
	.causes = {
		"Descriptive.",
	},
	.hints = {
		"Read it with the SVE predicate metrics: partially active predicates "
		"lower the useful work per instruction.",
	},
},
{
	.vendor = ARM, .name = "sve_predicate_percentage",
	.title = "SVE Predicated Operations",
	.description =
		"Share of speculatively executed operations that were predicated SVE "
		"operations.",
	.causes = {
		"Descriptive: vector-length-agnostic loops use predicates throughout.",
	},
	.hints = {
		"Look at the full/partial/empty split to judge how much of each vector "
		"does useful work.",
	},
},
{
	.vendor = ARM, .name = "sve_predicate_full_percentage",
	.title = "SVE Full-Predicate Operations",
	.description =
		"Share of predicated SVE operations with every element active.",
	.causes = {
		"Descriptive: high is good.",
	},
	.hints = {
		"Aim for this to dominate in hot loops.",
	},
},
{
	.vendor = ARM, .name = "sve_predicate_partial_percentage",
	.title = "SVE Partial-Predicate Operations",
	.description =
		"Share of predicated SVE operations with only some elements active.",
	.causes = {
		"Loop tails, short trip counts, conditional code inside vector loops.",
	},
	.hints = {
		"Process longer runs per loop or pad data to whole vectors.",
	},
},
{
	.vendor = ARM, .name = "sve_predicate_empty_percentage",
	.title = "SVE Empty-Predicate Operations",
	.description =
		"Share of predicated SVE operations with no element active: executed "
		"work that did nothing.",
	.causes = {
		"Conditions that are rarely true inside vectorised loops.",
	},
	.hints = {
		"Filter or compact the data first, or skip vectors whose predicate is "
		"empty.",
	},
},

/* ---------------------------------------------------------------- AMD Zen 4 / Zen 5 */
{
	.vendor = AMD, .name = "frontend_bound",
	.title = "Frontend Bound",
	.description =
		"Share of dispatch slots where the frontend supplied no operations "
		"while the backend could have taken them "
		"(de_no_dispatch_per_slot.no_ops_from_frontend). Zen 4 dispatches 6 "
		"operations per cycle, Zen 5 8.",
	.causes = {
		"Instruction cache, op cache and instruction TLB misses from a large "
		"code footprint.",
		"Branch predictor redirects and taken-branch limits.",
	},
	.hints = {
		"Split latency from bandwidth: `topdown collect --level 2 --process "
		"NAME`.",
		"Count ic_tag_hit_miss.instruction_cache_miss and "
		"op_cache_hit_miss.op_cache_miss; group hot code with PGO or BOLT.",
	},
},
{
	.vendor = AMD, .name = "frontend_bound_latency",
	.aliases = { "frontend_bound_by_latency" },
	.title = "Frontend Latency",
	.description =
		"Part of Frontend_Bound from cycles in which the frontend supplied no "
		"operations at all: fetch was waiting on a cache or TLB miss or on a "
		"redirect.",
	.causes = {
		"Instruction cache misses and instruction TLB misses.",
		"Redirects after mispredictions and branch target buffer misses.",
	},
	.hints = {
		"Count ic_tag_hit_miss.instruction_cache_miss, "
		"bp_l1_tlb_miss_l2_tlb_miss.all and bp_de_redirect.",
		"Sample instruction fetches with IBS, which only samples whole CPUs: "
		"`perf record -e ibs_fetch// -a -- sleep 10`, then `perf report --pid PID`.",
	},
},
{
	.vendor = AMD, .name = "frontend_bound_bandwidth",
	.aliases = { "frontend_bound_by_bandwidth" },
	.title = "Frontend Bandwidth",
	.description =
		"Part of Frontend_Bound from cycles in which the frontend supplied some "
		"operations, but fewer than the dispatch width.",
	.causes = {
		"Code decoded by the x86 decoders instead of delivered from the op "
		"cache.",
		"Taken branches ending fetch blocks early.",
	},
	.hints = {
		"Compare de_src_op_disp.op_cache with the decoder share "
		"(de_src_op_disp.decoder on Zen 4, de_src_op_disp.x86_decoder on Zen 5); "
		"keep hot loops small enough for the op cache.",
	},
},
{
	.vendor = AMD, .name = "bad_speculation",
	.title = "Bad Speculation",
	.description =
		"Share of dispatch slots used by operations that never retired "
		"(de_src_op_disp.all minus ex_ret_ops): wrong-path work after "
		"mispredictions and pipeline restarts.",
	.causes = {
		"Mispredicted branches on unpredictable data or indirect targets.",
		"Pipeline restarts (resyncs) from memory ordering and self-modifying "
		"code.",
	},
	.hints = {
		"Split mispredictions from restarts: `topdown collect --level 2 "
		"--process NAME`.",
		"Count ex_ret_brn_misp against ex_ret_brn for the misprediction rate.",
	},
},
{
	.vendor = AMD, .name = "bad_speculation_mispredicts",
	.aliases = { "bad_speculation_from_mispredicts" },
	.title = "Branch Mispredicts",
	.description =
		"Part of Bad_Speculation attributed to mispredicted branches "
		"(ex_ret_brn_misp).",
	.causes = {
		"Data-dependent branches, indirect calls with many targets, deep "
		"recursion.",
	},
	.hints = {
		"Sample with `topdown collect --pid PID --sample=ex_ret_brn_misp` (samples skid: look "
		"just before the reported instruction), or precisely with IBS, which "
		"only samples whole CPUs: `perf record -e ibs_op// -a -- sleep 10`, then "
		"`perf report --pid PID`.",
		"Count ex_ret_brn_ind_misp and ex_ret_near_ret_mispred for indirect and "
		"return mispredictions.",
	},
},
{
	.vendor = AMD, .name = "bad_speculation_pipeline_restarts",
	.aliases = { "bad_speculation_from_pipeline_restarts" },
	.title = "Pipeline Restarts",
	.description =
		"Part of Bad_Speculation attributed to pipeline restarts (resyncs) "
		"rather than branch mispredictions.",
	.causes = {
		"Memory-ordering violations from data shared with other cores.",
		"Self-modifying or cross-modifying code (JIT patching).",
	},
	.hints = {
		"Look for cache lines written by several threads with `perf c2c record "
		"-a -- sleep 10` (IBS-based on AMD, whole CPUs only, recent kernel and "
		"perf); keep generated code and data in separate pages.",
	},
},
{
	.vendor = AMD, .name = "backend_bound",
	.title = "Backend Bound",
	.description =
		"Share of dispatch slots left unused because the backend could not take "
		"operations (de_no_dispatch_per_slot.backend_stalls): a queue, register "
		"file or retire resource was full.",
	.causes = {
		"Loads missing the caches, so the retire queue fills behind them.",
		"Long-latency operations and dependency chains.",
	},
	.hints = {
		"Split memory from CPU: `topdown collect --level 2 --process NAME`.",
		"The dispatch stall events (de_dis_dispatch_token_stalls1.* on Zen 4, "
		"de_dispatch_stall_cycle_dynamic_tokens_part1.* on Zen 5) name the full "
		"resource.",
	},
},
{
	.vendor = AMD, .name = "backend_bound_memory",
	.aliases = { "backend_bound_by_memory" },
	.title = "Backend Bound: Memory",
	.description =
		"Part of Backend_Bound where retirement was blocked by a load that had "
		"not completed (ex_no_retire.load_not_complete).",
	.causes = {
		"Data cache misses to L2, L3 or DRAM; data TLB misses.",
		"Memory on a remote NUMA node or another CCD.",
	},
	.hints = {
		"Sample loads with IBS, which only samples whole CPUs: `perf mem record "
		"-a -- sleep 10`, then `perf mem report --sort=comm,mem,sym`.",
		"Count where fills come from: ls_dmnd_fills_from_sys.* (local L2, same "
		"CCX, other CCX, DRAM near or far).",
		"Check placement with `numastat -p PID` and TLB reloads with "
		"ls_l1_d_tlb_miss.all.",
	},
},
{
	.vendor = AMD, .name = "backend_bound_cpu",
	.aliases = { "backend_bound_by_cpu" },
	.title = "Backend Bound: CPU",
	.description =
		"Part of Backend_Bound not explained by incomplete loads: execution "
		"resources and dependencies limited progress.",
	.causes = {
		"Long dependency chains; divides (ex_div_busy); full schedulers.",
	},
	.hints = {
		"Count ex_div_busy and the dispatch stall events for full schedulers "
		"or register files; break dependency chains and hoist divisions.",
	},
},
{
	.vendor = AMD, .name = "smt_contention",
	.title = "SMT Contention",
	.description =
		"Share of dispatch slots given to the other hardware thread of the "
		"same core (de_no_dispatch_per_slot.smt_contention): this thread could "
		"have dispatched but its sibling was chosen.",
	.causes = {
		"A busy SMT sibling: another thread of this process or another process "
		"on the same physical core.",
	},
	.hints = {
		"See which threads share cores "
		"(/sys/devices/system/cpu/cpuN/topology/thread_siblings_list) and pin "
		"latency-critical threads to separate physical cores with taskset or "
		"cpusets.",
		"To measure the effect, repeat the run with SMT off "
		"(/sys/devices/system/cpu/smt/control).",
	},
},
{
	.vendor = AMD, .name = "retiring",
	.title = "Retiring",
	.description =
		"Share of dispatch slots used by operations that retired (ex_ret_ops): "
		"useful work.",
	.causes = {
		"High values: the core is busy; gains come from fewer or wider "
		"operations.",
	},
	.hints = {
		"Check the microcode share at level 2 and the vector width of FP work "
		"(fp_ops_retired_by_width.*); vectorise hot loops (-O3 -march=native).",
	},
},
{
	.vendor = AMD, .name = "retiring_fastpath",
	.aliases = { "retiring_from_fastpath" },
	.title = "Retiring: Fastpath",
	.description =
		"Part of Retiring from operations decoded directly (not from "
		"microcode).",
	.causes = {
		"Descriptive: the efficient part of retired work.",
	},
	.hints = {
		"Reduce the operation count: better algorithms, vectorisation.",
	},
},
{
	.vendor = AMD, .name = "retiring_microcode",
	.aliases = { "retiring_from_microcode" },
	.title = "Retiring: Microcode",
	.description =
		"Part of Retiring from operations supplied by microcode "
		"(ex_ret_ucode_ops): complex instructions that expand into long "
		"sequences.",
	.causes = {
		"Microcoded instructions in hot code: some string, system and legacy "
		"instructions.",
	},
	.hints = {
		"Count ex_ret_ucode_instr and find them with `topdown collect --pid PID "
		"--sample=ex_ret_ucode_instr` and `topdown query --hot`; replace them with "
		"simpler sequences or call them less often.",
	},
},
};

const size_t td_explain_text_count = sizeof(td_explain_texts) / sizeof(td_explain_texts[0]);
