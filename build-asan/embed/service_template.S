	.section .rodata
	.global td_service_unit_template
	.type td_service_unit_template, %object
td_service_unit_template:
	.incbin "packaging/topdown-agent.service.in"
	.byte 0
	.size td_service_unit_template, . - td_service_unit_template
	.section .note.GNU-stack,"",%progbits
