import sys

for number in open(sys.argv[1]):
    print("render", number.strip())
