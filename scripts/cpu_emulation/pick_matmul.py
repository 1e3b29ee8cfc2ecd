# Picks points of the matmul tunable space (kernlab --list, in points.txt) for the emulation:
# two of every (ASYNC, STAGES, VEC, BK), three whose B rows take several rounds, the likely best.
import re, random, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
pts = []
for line in open('points.txt'):
    name, blocks = line.split()
    d = dict(kv.split('=') for kv in name[name.index('[')+1:-1].split(';'))
    d = {k: int(v) for k, v in d.items()}
    for b in blocks.split(','):
        e = dict(d); e['BLOCK'] = int(b); pts.append(e)
def key(p): return (p['ASYNC'], p['STAGES'], p['VEC'], p['BK'])
groups = {}
for p in pts: groups.setdefault(key(p), []).append(p)
chosen = []
for k, g in sorted(groups.items()):
    chosen += random.sample(g, min(2, len(g)))
# B rows taking several rounds (BN / VEC > BLOCK), and the expected best ones
extra = [p for p in pts if p['BN'] // p['VEC'] > p['BLOCK']]
chosen += random.sample(extra, 3)
want = [dict(BM=128,BN=128,BK=8,WM=64,WN=64,TM=8,STAGES=3,ASYNC=1,VEC=4,BLOCK=128),
        dict(BM=128,BN=128,BK=16,WM=64,WN=32,TM=8,STAGES=2,ASYNC=0,VEC=4,BLOCK=256),
        dict(BM=128,BN=128,BK=16,WM=64,WN=64,TM=16,STAGES=2,ASYNC=1,VEC=4,BLOCK=128),
        dict(BM=256,BN=128,BK=8,WM=64,WN=64,TM=8,STAGES=4,ASYNC=1,VEC=4,BLOCK=256),
        # the measured bests at 4096x4096x1024 and 4095x4097x1023 (H200, 2026-11-28)
        dict(BM=128,BN=128,BK=16,WM=64,WN=64,TM=8,STAGES=2,ASYNC=0,VEC=4,BLOCK=128),
        dict(BM=256,BN=64,BK=16,WM=32,WN=64,TM=8,STAGES=2,ASYNC=1,VEC=2,BLOCK=256)]
for w in want:
    m = [p for p in pts if all(p[k]==v for k,v in w.items())]
    chosen += m[:1]
seen=set(); out=[]
for p in chosen:
    t = tuple(sorted(p.items()))
    if t not in seen: seen.add(t); out.append(p)
def args(p):
    TN = p['WM']*p['WN']//(32*p['TM'])
    est = p['TM']*TN + p['TM'] + TN + (0 if p['ASYNC'] else (p['BM']*p['BK']+p['BK']*p['BN'])//p['BLOCK']) + 24
    minb = max(1, min(4, 65536 // (p['BLOCK']*est)))
    return [p['BLOCK'],p['BM'],p['BN'],p['BK'],p['WM'],p['WN'],p['TM'],TN,p['STAGES'],p['ASYNC'],p['VEC'],minb]
with open('configs.inc','w') as f:
    for p in out:
        a = args(p)
        f.write('CFG(%s)\n' % ', '.join(map(str, a)))
print(len(out))
