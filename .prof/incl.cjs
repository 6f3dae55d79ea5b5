const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();
for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const cnt=new Map();let total=0;p.samples.forEach((id,i)=>{cnt.set(id,(cnt.get(id)||0)+(p.timeDeltas[i]||0));total+=p.timeDeltas[i]||0});
const incl=new Map();
for(const [id,t] of cnt){const seen=new Set();let cur=id;while(cur){const c=byId.get(cur).callFrame;const k=c.functionName+' '+c.url.replace(/.*\/work\/main\//,'').replace(/.*node_modules\//,'nm/')+':'+c.lineNumber;if(!seen.has(k)){seen.add(k);incl.set(k,(incl.get(k)||0)+t);}cur=parent.get(cur);}}
const f=process.argv[3]?new RegExp(process.argv[3]):null;
for(const [k,t] of [...incl].sort((a,b)=>b[1]-a[1]).filter(([k])=>!f||f.test(k)).slice(0,+process.argv[4]||50))console.log((100*t/total).toFixed(1).padStart(5),k);
