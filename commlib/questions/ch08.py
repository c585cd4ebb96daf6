"""Self-checks for the MPI lab (chapter 8). Answers are computed by commlib, never typed in."""

from .. import cost
from ..check import Given, Question, exercise_code, exercise_needs_run, register

register(Question(
    "ch08.ring_steps", lambda: cost.allreduce_terms(2**20, 4, "ring").steps, unit="Sendrecv calls",
    hints=((lambda given, right: given == right / 2,
            "That is one phase. The reduce-scatter takes n-1 steps and the all-gather n-1 more."),
           (lambda given, right: given == 2 * 4,
            "In step s a rank sends one chunk and receives one: n-1 steps per phase, not n.")),
    hint="Count the steps of both phases on n = 4 ranks: (n-1) + (n-1).",
))

# The ring itself, graded by hand: the student's cell is collected beside the reference solution.
exercise_code(
    "ex-lab-ring", "ring_allreduce_code",
    "# Your ring: replace the body, then run checker.check_ring_allreduce(ring_allreduce) in a cell of its own.\n"
    "def ring_allreduce(comm, array):\n"
    "    raise NotImplementedError(\"replace this line with your ring\")",
    "commlib.lab.p2p:ring_allreduce",
)

register(Question(
    "ch08.busbw_gbs", lambda ms=80: cost.bus_bandwidth("all_reduce", 64 * 2**20, 4, ms / 1e3) / 1e9, unit="GB/s",
    givens=(Given("ms", (20, 40, 60, 120, 160), "{} ms"),),
    hints=((lambda given, right: abs(given / right - 2 / 3) < 0.01,
            "That is the algorithm bandwidth M/t; the bus bandwidth multiplies it by 2(n-1)/n."),
           (lambda given, right: abs(given / right - 1e6 / 2**20 * 1) < 0.005,
            "64 MiB is 67,108,864 bytes, not 64 x 10^6.")),
    hint="busbw = (M / t) x 2(n-1)/n, with M in bytes, t in seconds; then divide by 10^9 for GB/s.",
))

register(Question(
    "ch08.balance_kb", lambda alpha_us=10, n=4: cost.latency_bandwidth_balance(n, 2e9, alpha_us * 1e-6, "ring") / 1e3,
    unit="kB",
    givens=(Given("alpha_us", (2, 5, 20, 50), "alpha = {} µs"), Given("n", (8, 16), "{} ranks")),
    hints=((lambda given, right: abs(given / right - 0.75) < 0.01,
            "The latency term has 2(n-1) alphas and the bandwidth term 2(n-1)/n M betas: the (n-1) cancel, "
            "the 1/n does not."),
           (lambda given, right, g: abs(given / right * g["n"] - 1) < 0.005,
            "That is alpha / beta: the 1/n of the bandwidth term does not cancel, so M = n alpha / beta.")),
    hint="Set 2(n-1) alpha = 2(n-1)/n M beta and solve for M (beta = 1/bandwidth).",
))

# The last two exercises read the student's own run of the lab: its fit, its figures, its copy control.
exercise_needs_run("ex-lab-half-rate", "the run's fitted $\\alpha$ and $1/\\beta$, its measured rates and the figure in "
                   "*What $1/\\beta$ measures here*")
exercise_needs_run("ex-lab-copy-bound", "the run's bus bandwidth at the largest size and its copy control")
