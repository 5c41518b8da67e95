"""python -m kmini: what this build of kmini is (kmini.info())."""
import kmini

for key, value in kmini.info().items():
    print(f"{key}: {value}")
