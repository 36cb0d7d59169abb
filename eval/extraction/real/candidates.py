import json,os,re,sys,random,hashlib
REPO=os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','..'))
FIX=os.path.join(REPO,'tests','fixtures')
used=set(json.loads(l)['source'] for l in open(os.path.join(REPO,'eval','extraction','real','sentences.jsonl')))
peps=sorted(f for f in os.listdir(FIX+'/peps') if 'peps/'+f not in used)
fresh=[p for i,p in enumerate(peps) if i%4==1]
train=[p for p in peps if p not in fresh]
HEAD=re.compile(r'^(\S[^\n]*)\n([=\-~^"\'`#*+]{3,})\s*$')
def units(path):
    t=open(path,encoding='utf-8').read()
    lines=t.split('\n')
    offs=[];o=0
    for l in lines: offs.append(o); o+=len(l)+1
    out=[]
    # header
    i=0
    while i<len(lines) and lines[i].strip():
        m=re.match(r'^(Status|Resolution|Superseded-By|Created|Post-History|Type|Replaces|Requires|Python-Version|Author|Title):',lines[i])
        if m: out.append(('Header',offs[i],offs[i]+len(lines[i])))
        i+=1
    section='Header'; in_lit=False; lit_indent=0; para=[]
    def flush():
        if not para: return
        s=offs[para[0]]; e=offs[para[-1]]+len(lines[para[-1]])
        txt=t[s:e]
        # list item split
        if re.match(r'\s*([-*+]|\d+\.|#\.)\s',txt):
            pieces=[]; cur=None
            for k in para:
                if re.match(r'\s*([-*+]|\d+\.|#\.)\s',lines[k]):
                    if cur: pieces.append(cur)
                    cur=[k,k]
                elif cur: cur[1]=k
            if cur: pieces.append(cur)
            for a,b in pieces:
                ss=offs[a]+len(lines[a])-len(lines[a].lstrip()); ee=offs[b]+len(lines[b])
                sent(ss,ee)
        else:
            ss=s+len(txt)-len(txt.lstrip()); sent(ss,e)
        para.clear()
    def sent(s,e):
        txt=t[s:e]
        st=0
        for m in re.finditer(r'(?<=[.!?])["\')]*\s+(?=[A-Z"(`*:\[])',txt):
            pre=txt[st:m.start()]
            if re.search(r'\b(e\.g|i\.e|etc|Mr|Dr|vs|al|cf)\.$',pre) or re.search(r'\b[A-Z]\.$',pre): continue
            out.append((section,s+st,s+m.start()+ (len(m.group(0))-len(m.group(0).lstrip('"\')')) if False else 0) + 0))
            # fix end to include trailing quotes
            ee=s+m.start()
            q=re.match(r'["\')]*',txt[m.start():]).group(0)
            out[-1]=(section,s+st,ee+len(q))
            st=m.end()
        out.append((section,s+st,e))
    k=0
    while k<len(lines):
        l=lines[k]
        if k+1<len(lines) and l.strip() and re.match(r'^([=\-~^"\'`#*+])\1{2,}\s*$',lines[k+1]) and len(lines[k+1].strip())>=len(l.strip())-2 and not l.startswith(' '):
            flush(); section=l.strip(); k+=2; continue
        if re.match(r'^([=\-~^"\'`#*+])\1{2,}\s*$',l): flush(); k+=1; continue
        if in_lit:
            if l.strip() and (len(l)-len(l.lstrip()))<=lit_indent: in_lit=False
            else: k+=1; continue
        if not l.strip(): flush(); k+=1; continue
        if l.lstrip().startswith('.. ') :
            flush()
            if re.match(r'\s*\.\. \[',l) or re.match(r'\s*\.\. _',l):
                out.append((section,offs[k]+len(l)-len(l.lstrip()),offs[k]+len(l)))
                k+=1; continue
            in_lit=True; lit_indent=len(l)-len(l.lstrip()); k+=1; continue
        if l.lstrip().startswith(('>>>','|','+--','====')) : flush(); k+=1; continue
        para.append(k)
        if l.rstrip().endswith('::'):
            flush(); in_lit=True; lit_indent=len(l)-len(l.lstrip())
        k+=1
    flush()
    res=[]
    for sec,s,e in out:
        x=t[s:e].rstrip()
        if len(x)<3: continue
        res.append((sec,x))
    return res
if __name__=='__main__':
    which=sys.argv[1]; lst=fresh if which=='fresh' else train
    allc={}
    for p in lst:
        us=units(FIX+'/peps/'+p)
        allc[p]=us
    json.dump({p:[[s,x] for s,x in v] for p,v in allc.items()},open('/tmp/lab/%s_cands.json'%which,'w'))
    print(len(lst), sum(len(v) for v in allc.values()))
