#!/usr/bin/env python3
# compare_tsan.py: hgrewrite and gcc's ThreadSanitizer side by side on the
# race corpus (docs/tsan-comparison.md). Every program here is built at -O0
# and -O2 (PIE, -g -pthread); the plain build is rewritten with bin/hgrewrite
# (run `make` first), the same source is built with -fsanitize=thread, and
# each binary runs RUNS times with default options. A run is right when the
# variables its reports name (globals by name, heap blocks as heap:<the
# allocating function>) are exactly the header's racy: list (none for a
# race-free program). Prints one line per case and a total.
#
#   testdata/races/compare_tsan.py [build-dir]     (RUNS=5 by default;
#                                                  ONLY=fork_* picks programs)
import os, re, subprocess, sys, glob, concurrent.futures as cf
SRC=os.path.dirname(os.path.abspath(__file__))
OUT=sys.argv[1] if len(sys.argv) > 1 else '/tmp/hg-compare-tsan'
HG=os.path.join(SRC, '..', '..', 'bin', 'hgrewrite')
RUNS=int(os.environ.get('RUNS', '5'))
os.makedirs(OUT, exist_ok=True)
def header(path):
    h={}
    for line in open(path):
        m=re.match(r'\s*(?:/\*|\*)\s*([a-z-]+):\s*(.*?)\s*$', line)
        if m: h[m.group(1)]=m.group(2)
        if line.strip().endswith('*/'): break
    return h
def names_hg(err, exe):
    out=set(re.findall(r"Location is global '([^']+)'", err))
    for m in re.finditer(r"Location is heap block .*allocated by thread T\d+ at:\n    #0 ([^ +(]+)", err):
        out.add('heap:'+m.group(1))
    if 'WARNING: hgrewrite' in err and not out: out.add('<unnamed>')
    return out
def names_tsan(err, exe):
    out=set()
    for rep in err.split('WARNING: ThreadSanitizer: ')[1:]:
        kind=rep.split(' (pid')[0]
        if kind!='data race': out.add('<'+kind+'>'); continue
        m=re.search(r"Location is global '([^']+)'", rep)
        if m: out.add(m.group(1)); continue
        m=re.search(r"Location is heap block[^\n]*\n((?:\s+#\d+ [^\n]*\n)+)", rep)
        if m:
            fn=None
            for fr in m.group(1).splitlines():
                if exe in fr:
                    fn=fr.split()[1].split('(')[0]; break
            out.add('heap:'+fn if fn else '<heap>'); continue
        out.add('<unnamed>')
    return out
def run(cmd, env=None):
    p=subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    return p.stderr
def case(args):
    path, opt = args
    base=os.path.basename(path).rsplit('.',1)[0]
    h=header(path)
    want=set(x.strip() for x in h.get('racy','').split(',') if x.strip()) if h.get('verdict')=='race' else set()
    cc='g++' if path.endswith('.cpp') else 'gcc'
    std=['-std=c++17'] if cc=='g++' else []
    exe=f'{OUT}/{base}-{opt}'
    subprocess.run([cc,*std,f'-{opt}','-g','-pthread','-fPIE','-pie','-o',exe,path],check=True,capture_output=True)
    subprocess.run([HG,exe,'-o',exe+'.hg'],check=True,capture_output=True)
    subprocess.run([cc,*std,f'-{opt}','-g','-pthread','-fsanitize=thread','-o',exe+'.tsan',path],check=True,capture_output=True)
    hg=[names_hg(run([exe+'.hg']), base) for _ in range(RUNS)]
    ts=[names_tsan(run([exe+'.tsan']), base) for _ in range(RUNS)]
    return base, opt, want, hg, ts
only=os.environ.get('ONLY', '*')
progs=sorted(glob.glob(f'{SRC}/{only}.c')+glob.glob(f'{SRC}/{only}.cpp'))
jobs=[(p,o) for p in progs for o in ('O0','O2')]
res=[]
with cf.ThreadPoolExecutor(2) as ex:
    for r in ex.map(case, jobs):
        res.append(r)
        base,opt,want,hg,ts=r
        print(base,opt,'want',sorted(want),'hg',sum(x==want for x in hg),[sorted(x) for x in hg if x!=want][:1],'tsan',sum(x==want for x in ts),[sorted(x) for x in ts if x!=want][:1], flush=True)
hgok=sum(all(x==r[2] for x in r[3]) for r in res); tsok=sum(all(x==r[2] for x in r[4]) for r in res)
print('TOTAL',len(res),'hg all-right',hgok,'tsan all-right',tsok)
