"""What the three numba examples share: numba or a skip, a best-of timer, and the
report (both times, the ratio, whether they agree)."""
import time


def numba_or_skip():
    """numba's module, or None after printing the skip (the caller exits 77)."""
    try:
        import numba
        return numba
    except ImportError:
        print("skipped: no numba (Debian: python3-numba)")
        return None


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def report(title, numba_label, t_numba, kmini_label, t_kmini, rate, agreement, agree):
    """Prints the comparison; returns the exit status (0 when they agree). `rate(t)` formats a throughput."""
    print(title)
    print(f"  {numba_label:<34}{t_numba:10.4f} s  {rate(t_numba)}")
    print(f"  {kmini_label:<34}{t_kmini:10.4f} s  {rate(t_kmini)}  ({t_numba / t_kmini:.1f}x)")
    print(f"  {agreement}{'' if agree else ': DISAGREE'}")
    return 0 if agree else 1
