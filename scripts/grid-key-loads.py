#!/usr/bin/env python3
# Most cells in one bucket under three grid keys (docs/design.md §9.17): the tiled Z-order of
# grid_key (shaders/frame.wgsl) replayed by hand, truncated Z-codes, and the plain cell hash.
# Run: python3 scripts/grid-key-loads.py (no dependencies; a few seconds).
import random
M=0xffffffff
def h(k):
    x,y,z=k
    v=((x*0x8da6b343)&M)^((y*0xd8163841)&M)^((z*0xcb1ab31f)&M)
    v^=v>>16; v=(v*0x7feb352d)&M; v^=v>>15; v=(v*0x846ca68b)&M; v^=v>>16; return v
def z(rel,bits):
    key=0;at=0
    for i in range(max(bits)):
        for a in range(3):
            if i<bits[a]: key|=((rel[a]>>i)&1)<<at; at+=1
    return key
def tiles(span,B):
    t=[0,0,0]
    for _ in range(B):
        left=[span[a]-t[a] for a in range(3)]
        a=max(range(3),key=lambda a:(left[a],-a)); t[a]+=1
    return t
def run(cells,B,name):
    lo=[min(c[a] for c in cells) for a in range(3)]; hi=[max(c[a] for c in cells) for a in range(3)]
    span=[(hi[a]-lo[a]).bit_length() for a in range(3)]
    t=tiles(span,B) if sum(span)>B else span
    from collections import Counter
    ct=Counter(); cz=Counter(); ch=Counter()
    for c in set(cells):
        rel=[c[a]-lo[a] for a in range(3)]
        tl=tuple(rel[a]>>t[a] for a in range(3))
        ct[z(rel,t)^(h(tl)&((1<<B)-1))]+=1
        cz[z(rel,t)]+=1
        ch[h(tuple(x&M for x in c))&((1<<B)-1)]+=1
    print(name,span,t,'tiled max',max(ct.values()),'trunc max',max(cz.values()),'hash max',max(ch.values()), 'cells',len(set(cells)))
B=16
run([(k*512,0,0) for k in range(2**16)],B,'line spacing 512')
random.seed(1)
run([(random.randrange(512),random.randrange(512),random.randrange(512)) for _ in range(2**16)],B,'uniform 2^27 box')
run([(random.randrange(2**20),random.randrange(2**20),random.randrange(2**20)) for _ in range(2**16)],B,'wide')
run([(x*64,y*64,zz*64) for x in range(40) for y in range(40) for zz in range(40)],B,'lattice 64')
