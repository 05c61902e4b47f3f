"""No circle between the files (top-level modules) of one crate.

    python3 scripts/check_layering.py [CRATE_SRC_DIR ...]    (default: crates/*/src)

A module's dependencies are the other top-level modules of its crate that its code (comments
and `#[cfg(test)]` modules left out) names through `crate::module`, `crate::{module, ...}` or
an item the crate root re-exports from a module (`pub use module::Item`). Prints each circle
(a strongly connected set of modules, with the edges inside it) and exits 1 if there is one.
"""
import re, sys, os, glob
def strip(t):
    i=t.find('#[cfg(test)]')
    if i>=0: t=t[:i]
    return '\n'.join(l for l in t.split('\n') if not l.strip().startswith('//'))
def graph(src):
    files=glob.glob(src+'/**/*.rs',recursive=True)
    mods={}
    for f in files:
        rel=os.path.relpath(f,src)[:-3]
        name='lib' if rel in('lib','main') else rel.split('/')[0]
        mods.setdefault(name,[]).append(f)
    root=src+'/lib.rs' if os.path.exists(src+'/lib.rs') else src+'/main.rs'
    rt=strip(open(root).read())
    reexp={}
    for m in re.finditer(r'pub use (\w+)::(?:\w+::)*(\{[^}]*\}|[\w:]+)(?: as (\w+))?;',rt,re.S):
        mod=m.group(1); body=m.group(2)
        names=re.findall(r'(\w+)(?:\s+as\s+(\w+))?',body.strip('{}'))
        for n,alias in names:
            reexp[alias or n]=mod
        if m.group(3): reexp[m.group(3)]=mod
    edges={}
    for m,fs in mods.items():
        deps=set()
        for f in fs:
            t=strip(open(f).read())
            for mm in re.finditer(r'crate::(\{[^}]*\}|\w+)',t,re.S):
                g=mm.group(1)
                items=re.findall(r'\b(\w+)',g) if g.startswith('{') else [g]
                # for grouped, only first segment of each path
                if g.startswith('{'):
                    items=[p.strip().split('::')[0] for p in g.strip('{}').split(',') if p.strip()]
                    items=[re.sub(r'\s+as\s+\w+','',x).strip() for x in items]
                for it in items:
                    if it in mods: deps.add(it)
                    elif it in reexp: deps.add(reexp[it])
        deps.discard(m); deps.discard('lib')
        edges[m]=deps
    return edges
def sccs(edges):
    idx={};low={};st=[];on=set();res=[];c=[0]
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
        for w in edges.get(v,()):
            if w not in idx: sc(w);low[v]=min(low[v],low[w])
            elif w in on: low[v]=min(low[v],idx[w])
        if low[v]==idx[v]:
            comp=[]
            while True:
                w=st.pop();on.discard(w);comp.append(w)
                if w==v:break
            if len(comp)>1: res.append(comp)
    for v in list(edges):
        if v not in idx: sc(v)
    return res
def self_test():
    """The checker finds a circle made through each kind of import, and passes a one-way crate."""
    import tempfile
    cases = {
        "path": ({"a.rs": "use crate::b::X;", "b.rs": "fn f() { crate::a::g() }"}, True),
        "group": ({"a.rs": "use crate::{b, c};", "b.rs": "", "c.rs": "use crate::a;"}, True),
        "re-export": ({"lib.rs": "mod a; mod b;\npub use b::inner::Thing;", "a.rs": "use crate::Thing;",
                       "b.rs": "use crate::a::Y;"}, True),
        "comment and test only": ({"a.rs": "use crate::b::X;", "b.rs": "// crate::a::Y\n#[cfg(test)]\nuse crate::a::Z;"}, False),
        "one way": ({"a.rs": "use crate::b::X;", "b.rs": "use crate::c::Y;", "c.rs": ""}, False),
    }
    for name, (files, circle) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            files = dict(files)
            files.setdefault("lib.rs", "")
            for f, text in files.items():
                open(os.path.join(d, f), "w").write(text)
            found = bool(sccs(graph(d)))
            assert found == circle, f"self-test {name!r}: circle found {found}, expected {circle}"
    print("check_layering self-test: 5 cases pass")

if sys.argv[1:] == ["--self-test"]:
    self_test()
    sys.exit(0)
bad=0
for src in (sys.argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'crates', '*', 'src')))):
    e=graph(src)
    for comp in sccs(e):
        bad+=1
        print(src,'SCC:',sorted(comp))
        for a in sorted(comp): print('   ',a,'->',sorted(set(e[a])&set(comp)))
if not bad:
    print('no circle between the modules of any crate')
sys.exit(1 if bad else 0)
