"""The conformance suite's error rule (tests/conformance/run_case.h), for
every Python test: a result passes when its max error against float64 is at
most FORWARD_FACTOR (out) or GRADIENT_FACTOR (gradients) times that of a
naive attention in the same low precision, plus SLACK times max(1, max|ref|);
lse within LSE_TOLERANCE of max(1, |lse|). No NumPy here: the torch tests
import it too."""
SLACK = {"float32": 1e-4, "float16": 2.0 ** -10 / 4, "bfloat16": 2.0 ** -7 / 4}
FORWARD_FACTOR, GRADIENT_FACTOR, LSE_TOLERANCE = 2.0, 3.0, 1e-3


def tolerance(naive_error, reference_max, dtype_name, factor):
    return factor * naive_error + SLACK[dtype_name] * max(1.0, reference_max)
