const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));const want=process.argv[3];
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();
for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const cnt=new Map();p.samples.forEach((id,i)=>cnt.set(id,(cnt.get(id)||0)+(p.timeDeltas[i]||0)));
const stacks=new Map();
for(const [id,t] of cnt){const n=byId.get(id);if(n.callFrame.functionName!==want)continue;
let s=[];let cur=parent.get(id);for(let k=0;k<6&&cur;k++){const c=byId.get(cur).callFrame;s.push(c.functionName+'@'+c.url.replace(/.*\/work\/main\//,'').replace(/.*node_modules\//,'nm/')+':'+c.lineNumber);cur=parent.get(cur);}
const key=s.join(' < ');stacks.set(key,(stacks.get(key)||0)+t);}
for(const [k,t] of [...stacks].sort((a,b)=>b[1]-a[1]).slice(0,8))console.log((t/1000).toFixed(0)+'ms',k,'\n');
