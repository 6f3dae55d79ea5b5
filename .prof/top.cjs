const fs=require('fs');const f=process.argv[2];const p=JSON.parse(fs.readFileSync(f));
const self=new Map();const byId=new Map(p.nodes.map(n=>[n.id,n]));
const dt=p.timeDeltas;let total=0;const cnt=new Map();
p.samples.forEach((id,i)=>{cnt.set(id,(cnt.get(id)||0)+(dt[i]||0));total+=dt[i]||0});
const byFile=new Map();
for(const [id,t] of cnt){const n=byId.get(id);const cf=n.callFrame;const k=cf.functionName+' '+cf.url.replace(/.*node_modules\//,'nm/').replace(/.*\/work\/main\//,'')+':'+cf.lineNumber;self.set(k,(self.get(k)||0)+t);
const file=cf.url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/,'$1').replace(/.*\/work\/main\//,'');byFile.set(file,(byFile.get(file)||0)+t);}
const top=[...self].sort((a,b)=>b[1]-a[1]).slice(0,40);
for(const [k,t] of top)console.log((100*t/total).toFixed(1).padStart(5),k);
console.log('--- by file/package');
for(const [k,t] of [...byFile].sort((a,b)=>b[1]-a[1]).slice(0,30))console.log((100*t/total).toFixed(1).padStart(5),k);
