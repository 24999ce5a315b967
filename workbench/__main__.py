from workbench.launch import run

run()
