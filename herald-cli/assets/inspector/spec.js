// Show PROFILE.md, scrolled to the section named in the fragment (#P8).
const text = await (await fetch('spec/PROFILE.md')).text();
const main = document.querySelector('main');
for (const part of text.split(/\n(?=## )/)) {
  const section = document.createElement('section');
  const m = part.match(/^## (P\d+)\./);
  if (m) section.id = m[1];
  const pre = document.createElement('pre');
  pre.textContent = part;
  section.append(pre);
  main.append(section);
}
const target = location.hash && document.getElementById(location.hash.slice(1));
if (target) { target.classList.add('target'); target.scrollIntoView(); }
